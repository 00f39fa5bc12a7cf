import { route } from '../../../kernel/route';
import { OBJECT } from './serializer';
import { createSecret, deleteSecret, findSecret, listSecrets } from './service';

const one = { object: OBJECT };
const many = { object: OBJECT, list: true };

export const routes = [
  route('get', '/v1/apps/secrets', 'GetAppsSecrets', many, listSecrets),
  route('post', '/v1/apps/secrets', 'PostAppsSecrets', one, createSecret),
  route('post', '/v1/apps/secrets/delete', 'PostAppsSecretsDelete', one, deleteSecret),
  route('get', '/v1/apps/secrets/find', 'GetAppsSecretsFind', one, findSecret),
];
