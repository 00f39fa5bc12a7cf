import { route } from '../../../kernel/route';
import { CLAIM_OBJECT, OBJECT } from './serializer';
import { claimAccountSession, createAccountSession } from './service';

export const routes = [
  route('post', '/v1/account_sessions', 'PostAccountSessions', { object: OBJECT }, createAccountSession, { responseHasSecret: true }),
  route('post', '/sandbox/v1/account_sessions/claim', 'PostSandboxAccountSessionsClaim', { object: CLAIM_OBJECT }, claimAccountSession),
];
