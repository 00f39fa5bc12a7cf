// Countries and currencies of connected accounts, as the public API knows them: ISO 3166-1
// alpha-2 codes, the countries where an account can be created (full service, and the
// cross-border payout countries of the public country specs), and each one's currencies.

/** Every officially assigned ISO 3166-1 alpha-2 code: anything else is an unknown country. */
const ISO_COUNTRIES = new Set(
  (
    'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ ' +
    'CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO ' +
    'FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE ' +
    'JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO ' +
    'MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW ' +
    'PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM ' +
    'TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW'
  ).split(' '),
);

/** The European Economic Area countries Stripe serves fully (and where companies name their directors). */
const EEA = new Set('AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IT LI LT LU LV MT NL NO PL PT RO SE SI SK'.split(' '));

/** Where accounts can be created, with each country's own currency. */
const LOCAL_CURRENCY: Readonly<Record<string, string>> = {
  // Full service.
  AE: 'aed', AT: 'eur', AU: 'aud', BE: 'eur', BG: 'bgn', BR: 'brl', CA: 'cad', CH: 'chf', CY: 'eur', CZ: 'czk',
  DE: 'eur', DK: 'dkk', EE: 'eur', ES: 'eur', FI: 'eur', FR: 'eur', GB: 'gbp', GI: 'gbp', GR: 'eur', HK: 'hkd',
  HR: 'eur', HU: 'huf', IE: 'eur', IN: 'inr', IT: 'eur', JP: 'jpy', LI: 'chf', LT: 'eur', LU: 'eur', LV: 'eur',
  MT: 'eur', MX: 'mxn', MY: 'myr', NL: 'eur', NO: 'nok', NZ: 'nzd', PL: 'pln', PT: 'eur', RO: 'ron', SE: 'sek',
  SG: 'sgd', SI: 'eur', SK: 'eur', TH: 'thb', US: 'usd',
  // Cross-border payouts (supported_transfer_countries of the US country spec).
  AG: 'xcd', AL: 'all', AM: 'amd', AO: 'aoa', AR: 'ars', AZ: 'azn', BA: 'bam', BD: 'bdt', BJ: 'xof', BN: 'bnd',
  BO: 'bob', BS: 'bsd', BT: 'btn', BW: 'bwp', CI: 'xof', CL: 'clp', CO: 'cop', CR: 'crc', DO: 'dop', DZ: 'dzd',
  EC: 'usd', EG: 'egp', ET: 'etb', GA: 'xaf', GH: 'ghs', GM: 'gmd', GT: 'gtq', GY: 'gyd', ID: 'idr', IL: 'ils',
  IS: 'isk', JM: 'jmd', JO: 'jod', KE: 'kes', KH: 'khr', KR: 'krw', KW: 'kwd', KZ: 'kzt', LA: 'lak', LC: 'xcd',
  LK: 'lkr', MA: 'mad', MC: 'eur', MD: 'mdl', MG: 'mga', MK: 'mkd', MN: 'mnt', MO: 'mop', MU: 'mur', MZ: 'mzn',
  NA: 'nad', NE: 'xof', NG: 'ngn', OM: 'omr', PA: 'usd', PE: 'pen', PH: 'php', PK: 'pkr', PY: 'pyg', QA: 'qar',
  RS: 'rsd', RW: 'rwf', SA: 'sar', SM: 'eur', SN: 'xof', SV: 'usd', TN: 'tnd', TR: 'try', TT: 'ttd', TW: 'twd',
  TZ: 'tzs', UY: 'uyu', UZ: 'uzs', VN: 'vnd', ZA: 'zar',
};

/** Accounts in Europe may be paid out in any of the region's currencies (and US dollars). */
const EUROPEAN_CURRENCIES = ['bgn', 'chf', 'czk', 'dkk', 'eur', 'gbp', 'huf', 'nok', 'pln', 'ron', 'sek', 'usd'];
const EUROPE = new Set([...EEA, 'CH', 'GB', 'GI']);

export const isIsoCountry = (code: string): boolean => ISO_COUNTRIES.has(code);
export const isSupportedCountry = (code: string): boolean => Object.prototype.hasOwnProperty.call(LOCAL_CURRENCY, code);

/** The currency an account in `country` uses unless it says otherwise. */
export const localCurrency = (country: string): string => LOCAL_CURRENCY[country] ?? 'usd';

/** The currencies `default_currency` may be in `country`. */
export function supportedCurrencies(country: string): string[] {
  if (EUROPE.has(country)) return EUROPEAN_CURRENCIES;
  if (country === 'CA') return ['cad', 'usd'];
  return [localCurrency(country)];
}

/** Where a company names its directors (the EEA and the UK). */
export const asksForDirectors = (country: string): boolean => EEA.has(country) || country === 'GB';
