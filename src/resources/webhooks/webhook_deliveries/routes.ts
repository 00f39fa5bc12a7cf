import { route } from '../../../kernel/route';
import { ATTEMPT_OBJECT, DELIVERY_OBJECT } from './serializer';
import { listDeliveryAttempts, resendEvent } from './service';

export const routes = [
  route(
    'get',
    '/sandbox/v1/webhook_endpoints/{webhook_endpoint}/deliveries',
    'GetSandboxWebhookEndpointsWebhookEndpointDeliveries',
    { object: ATTEMPT_OBJECT, list: true },
    listDeliveryAttempts,
  ),
  // Each resend makes an outbound POST to the endpoint: its own, stricter limit (RESEND_RATE_LIMIT).
  route('post', '/sandbox/v1/events/{id}/resend', 'PostSandboxEventsIdResend', { object: DELIVERY_OBJECT }, resendEvent, {
    rateLimit: (config) => config.resendRateLimit,
  }),
];
