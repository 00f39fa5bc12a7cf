import { route } from '../../../kernel/route';
import { hostedPage } from '../../../hosted/pages';
import { OBJECT } from './serializer';
import { createLoginLink } from './service';
import { openDashboard } from './pages';

export const routes = [
  // The URL is a bearer credential, so the idempotent copy of the answer is stored sealed.
  route('post', '/v1/accounts/{account}/login_links', 'PostAccountsAccountLoginLinks', { object: OBJECT }, createLoginLink, { responseHasSecret: true }),
];

export const pages = [hostedPage('get', '/login_links/:token', openDashboard)];
