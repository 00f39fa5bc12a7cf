import type { CustomerTaxId } from '../../../generated/prisma/client';
import { ref, type ExpandableFields } from '../../../kernel/expand';

export const TAX_ID_OBJECT = 'tax_id';

export type TaxIdRow = Omit<CustomerTaxId, 'seq' | 'accountId'>;

/** What verifying a tax id found (`verification`): null where it isn't stored. */
export interface TaxIdVerification {
  status: 'pending' | 'unavailable' | 'unverified' | 'verified';
  verified_address: string | null;
  verified_name: string | null;
}

/** The types a tax id may have (the public API's, as stripe-node's `TaxIdCreateParams.Type` lists them). */
export const TAX_ID_TYPES = ['ad_nrt', 'ae_trn', 'al_tin', 'am_tin', 'ao_tin', 'ar_cuit', 'au_abn', 'au_acn', 'au_arn', 'au_wpn', 'aw_tin', 'az_tin', 'ba_tin', 'bb_tin', 'bd_bin', 'bf_ifu', 'bg_uic', 'bh_vat', 'bj_ifu', 'bo_tin', 'br_cnpj', 'br_cpf', 'bs_tin', 'bw_vat', 'by_tin', 'ca_bn', 'ca_gst_hst', 'ca_pst_bc', 'ca_pst_mb', 'ca_pst_sk', 'ca_qst', 'cd_nif', 'ch_uid', 'ch_vat', 'ci_vat', 'cl_tin', 'cm_niu', 'cn_tin', 'co_nit', 'cr_tin', 'cv_nif', 'cz_dic', 'de_stn', 'do_rcn', 'ec_ruc', 'eg_tin', 'es_cif', 'et_tin', 'eu_oss_vat', 'eu_vat', 'fo_vat', 'fr_siren', 'fr_siret', 'fr_spi', 'gb_vat', 'ge_vat', 'gh_tin', 'gi_tin', 'gn_nif', 'hk_br', 'hr_oib', 'hu_tin', 'ic_nif', 'id_npwp', 'il_vat', 'in_gst', 'is_kt', 'is_vat', 'it_cf', 'jp_cn', 'jp_rn', 'jp_trn', 'ke_pin', 'kg_tin', 'kh_tin', 'kr_brn', 'kz_bin', 'la_tin', 'li_uid', 'li_vat', 'lk_vat', 'ma_vat', 'md_cf', 'md_vat', 'me_pib', 'mk_vat', 'mr_nif', 'mu_vat', 'mx_rfc', 'my_frp', 'my_itn', 'my_sst', 'mz_nuit', 'ng_tin', 'no_vat', 'no_voec', 'np_pan', 'nz_bn', 'nz_gst', 'om_vat', 'pe_ruc', 'ph_tin', 'pl_nip', 'pt_nif', 'py_ruc', 'ro_tin', 'rs_pib', 'ru_inn', 'ru_kpp', 'sa_vat', 'sg_gst', 'sg_uen', 'si_tin', 'sm_coe', 'sn_ninea', 'sr_fin', 'sv_nit', 'th_vat', 'tj_tin', 'tr_tin', 'tt_bir', 'tt_vat', 'tw_vat', 'tz_vat', 'ua_vat', 'ug_tin', 'us_ein', 'uy_ruc', 'uz_tin', 'uz_vat', 've_rif', 'vn_tin', 'za_vat', 'zm_tin', 'zw_tin'] as const;

export function serializeTaxId(row: TaxIdRow, verification: TaxIdVerification | null = row.verification as unknown as TaxIdVerification | null) {
  return {
    id: row.id,
    object: TAX_ID_OBJECT,
    country: row.country,
    created: row.created,
    customer: row.customerId as string | Record<string, unknown>,
    customer_account: null,
    livemode: false,
    owner: { customer: row.customerId as string | Record<string, unknown>, customer_account: null, type: 'customer' as const },
    type: row.type,
    value: row.value,
    verification,
  };
}

export const serializeDeletedTaxId = (id: string) => ({ id, object: TAX_ID_OBJECT, deleted: true as const });

export const expandable: ExpandableFields = { customer: ref('customer') };
