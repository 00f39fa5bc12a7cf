import { route } from '../../../kernel/route';
import { hostedPage } from '../../../hosted/pages';
import { OBJECT } from './serializer';
import { createAccountLink } from './service';
import { openOnboarding, submitOnboarding } from './pages';

export const routes = [
  // The URL is a bearer credential, so the idempotent copy of the answer is stored sealed.
  route('post', '/v1/account_links', 'PostAccountLinks', { object: OBJECT }, createAccountLink, { responseHasSecret: true }),
];

export const pages = [hostedPage('get', '/account_links/:token', openOnboarding), hostedPage('post', '/account_links/:token', submitOnboarding)];
