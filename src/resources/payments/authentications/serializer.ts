import type { PaymentAuthentication } from '../../../generated/prisma/client';
import type { ExpandableFields } from '../../../kernel/expand';

// A 3-D Secure challenge as the sandbox's operations show it (no public API has one): which
// intent waits on it, and how it ended. Never its page's token.

export const OBJECT = 'sandbox.payment_authentication';

export type AuthenticationRow = Pick<PaymentAuthentication, 'id' | 'created' | 'intentType' | 'intentId' | 'status' | 'expiresAt' | 'answeredAt'>;

export const serializeAuthentication = (row: AuthenticationRow) => ({
  id: row.id,
  object: OBJECT,
  answered_at: row.answeredAt,
  created: row.created,
  expires_at: row.expiresAt,
  livemode: false,
  payment_intent: row.intentType === 'payment_intent' ? row.intentId : null,
  setup_intent: row.intentType === 'setup_intent' ? row.intentId : null,
  status: row.status,
});

export const expandable: ExpandableFields = {};
