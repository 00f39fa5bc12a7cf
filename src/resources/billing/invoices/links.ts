import { Prisma } from '../../../generated/prisma/client';
import type { Tx } from '../../../events/emit';
import { hashKey as hashToken } from '../../../kernel/auth';
import type { Deps } from '../../../kernel/route';
import { hostedUrl } from '../../../hosted/pages';
import { randomBase62 } from '../../../lib/ids';

// The links of a finalized invoice (`hosted_invoice_url`, `invoice_pdf`): one unguessable token
// per invoice, made at finalization and never changed (the public API's URL is stable). It opens
// only that invoice's page and PDF, whoever holds it: no key is asked. Kept as a hash to find the
// invoice and sealed to show the URLs again, so the database alone never yields a working link.

export const INVOICE_PAGE_PATH = '/invoices';
export const TOKEN_SHAPE = /^[A-Za-z0-9]{48}$/;

export type LinkDeps = Pick<Deps, 'config' | 'encryption'>;

export interface InvoiceLinkUrls {
  readonly hosted: string;
  readonly pdf: string;
}

export const invoicePageUrl = (deps: Pick<Deps, 'config'>, token: string): string => hostedUrl(deps.config, `${INVOICE_PAGE_PATH}/${token}`);

const urlsOf = (deps: Pick<Deps, 'config'>, token: string): InvoiceLinkUrls => ({ hosted: invoicePageUrl(deps, token), pdf: `${invoicePageUrl(deps, token)}/pdf` });

/** Gives a just finalized invoice its link (once: finalizing again keeps the first); answers its URLs. */
export async function createInvoiceLink(tx: Tx, deps: LinkDeps, accountId: string, invoiceId: string, now: number): Promise<InvoiceLinkUrls> {
  const token = randomBase62(48);
  const made = await tx.$executeRaw`
    INSERT INTO invoice_links (invoice_id, account_id, created, token_hash, token)
    VALUES (${invoiceId}, ${accountId}, ${now}, ${hashToken(token)}, ${await deps.encryption.seal(token)})
    ON CONFLICT (invoice_id) DO NOTHING`;
  return made === 1 ? urlsOf(deps, token) : (await invoiceLinks(tx, deps, [invoiceId])).get(invoiceId)!;
}

/** The URLs of those invoices that have a link, by invoice id. */
export async function invoiceLinks(tx: Tx, deps: LinkDeps, invoiceIds: readonly string[]): Promise<Map<string, InvoiceLinkUrls>> {
  if (invoiceIds.length === 0) return new Map();
  const rows = await tx.$queryRaw<{ invoice_id: string; token: string }[]>`
    SELECT invoice_id, token FROM invoice_links WHERE invoice_id IN (${Prisma.join([...new Set(invoiceIds)])})`;
  return new Map(await Promise.all(rows.map(async (r) => [r.invoice_id, urlsOf(deps, await deps.encryption.open(r.token))] as const)));
}

/** The invoice (and its account) a page token opens, or null for a token that never was one. */
export async function invoiceOfToken(tx: Tx, token: string): Promise<{ invoiceId: string; accountId: string } | null> {
  if (!TOKEN_SHAPE.test(token)) return null;
  const [row] = await tx.$queryRaw<{ invoice_id: string; account_id: string }[]>`
    SELECT invoice_id, account_id FROM invoice_links WHERE token_hash = ${hashToken(token)}`;
  return row ? { invoiceId: row.invoice_id, accountId: row.account_id } : null;
}
