import { invalidRequest } from '../../../kernel/errors';
import type { TaxIdVerification } from './serializer';

// What a tax id's value must look like for its type, and what verifying it finds. The common
// types have their format (the public API's examples fit each: docs.stripe.com/billing/customer/tax-ids);
// the rest take letters, digits and the separators their numbers use.

const EU_PREFIXES = 'AT|BE|BG|CY|CZ|DE|DK|EE|EL|ES|FI|FR|HR|HU|IE|IT|LT|LU|LV|MT|NL|PL|PT|RO|SE|SI|SK|XI';

const FORMATS: Readonly<Record<string, RegExp>> = {
  ae_trn: /^\d{15}$/,
  au_abn: /^\d{11}$/,
  au_arn: /^\d{12}$/,
  br_cnpj: /^\d{2}\.\d{3}\.\d{3}\/\d{4}-\d{2}$/,
  br_cpf: /^\d{3}\.\d{3}\.\d{3}-\d{2}$/,
  ca_bn: /^\d{9}$/,
  ca_gst_hst: /^\d{9}RT\d{4}$/,
  ca_qst: /^\d{10}TQ\d{4}$/,
  ch_vat: /^CHE-?\d{3}\.?\d{3}\.?\d{3} ?(MWST|TVA|IVA)$/,
  es_cif: /^[A-Z]\d{8}$/,
  eu_oss_vat: /^EU\d{9}$/,
  eu_vat: new RegExp(`^(${EU_PREFIXES})[0-9A-Z]{8,12}$`),
  gb_vat: /^(GB)?(\d{9}|\d{12})$/,
  in_gst: /^\d{2}[A-Z]{5}\d{4}[A-Z][0-9A-Z]Z[0-9A-Z]$/,
  jp_cn: /^\d{13}$/,
  kr_brn: /^\d{3}-?\d{2}-?\d{5}$/,
  mx_rfc: /^[A-Z&Ñ]{3,4}\d{6}[A-Z0-9]{3}$/,
  no_vat: /^\d{9}MVA$/,
  nz_gst: /^\d{8,9}$/,
  sg_uen: /^\d{8,9}[A-Z]$/,
  us_ein: /^\d{2}-?\d{7}$/,
  za_vat: /^4\d{9}$/,
};

const GENERIC = /^[0-9A-Za-z][0-9A-Za-z .\-/]{1,48}[0-9A-Za-z]$/;

/** The value checked against its type's format: the public API's 400 when it doesn't fit. */
export function checkTaxIdValue(type: string, value: string, param = 'value'): void {
  const format = FORMATS[type] ?? GENERIC;
  // Spaces between groups are allowed where the format has none (`DE 123 456 789`); letters in either case.
  const candidate = (FORMATS[type] && !format.source.includes(' ') ? value.replace(/\s+/g, '') : value).toUpperCase();
  if (!format.test(candidate)) {
    throw invalidRequest(`Invalid value for ${type}.`, 'tax_id_invalid', param);
  }
}

/** The country a tax id is of: its type's (`au_abn` → AU); a European VAT number's own prefix (EL is Greece, XI Northern Ireland). */
export function taxIdCountry(type: string, value: string): string | null {
  if (type === 'eu_oss_vat') return null;
  if (type === 'eu_vat') {
    const prefix = value.replace(/\s+/g, '').slice(0, 2).toUpperCase();
    return prefix === 'EL' ? 'GR' : prefix === 'XI' ? 'GB' : prefix;
  }
  return type.slice(0, 2).toUpperCase();
}

/** The types checked against a government register (VIES, HMRC, the ABR); others are `unavailable`. */
const VERIFIED_TYPES = new Set(['eu_vat', 'gb_vat', 'au_abn']);

/**
 * What verifying a tax id finds in test mode: a value with `000000000` is verified, one with
 * `111111111` unverified, any other stays `pending` (nothing is asked of a register).
 */
export function testVerification(type: string, value: string): TaxIdVerification {
  const status = !VERIFIED_TYPES.has(type) ? 'unavailable' : value.includes('000000000') ? 'verified' : value.includes('111111111') ? 'unverified' : 'pending';
  return { status, verified_address: null, verified_name: null };
}
