import { route } from '../../../kernel/route';
import { OBJECT } from './serializer';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookEndpoints,
  retrieveWebhookEndpoint,
  updateWebhookEndpoint,
} from './service';

const one = { object: OBJECT };
const many = { object: OBJECT, list: true };

export const routes = [
  route('get', '/v1/webhook_endpoints', 'GetWebhookEndpoints', many, listWebhookEndpoints),
  // The create response carries the signing secret: its idempotent copy is stored sealed.
  route('post', '/v1/webhook_endpoints', 'PostWebhookEndpoints', one, createWebhookEndpoint, { responseHasSecret: true, oneStatement: () => true }),
  route('get', '/v1/webhook_endpoints/{webhook_endpoint}', 'GetWebhookEndpointsWebhookEndpoint', one, retrieveWebhookEndpoint),
  route('post', '/v1/webhook_endpoints/{webhook_endpoint}', 'PostWebhookEndpointsWebhookEndpoint', one, updateWebhookEndpoint),
  route('delete', '/v1/webhook_endpoints/{webhook_endpoint}', 'DeleteWebhookEndpointsWebhookEndpoint', one, deleteWebhookEndpoint),
];
