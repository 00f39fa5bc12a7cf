import { route } from '../../../kernel/route';
import { OBJECT } from './serializer';
import { awaitForward, createForwardingRequest, listForwardingRequests, retrieveForwardingRequest } from './service';

const one = { object: OBJECT };
const many = { object: OBJECT, list: true };

export const routes = [
  route('get', '/v1/forwarding/requests', 'GetForwardingRequests', many, listForwardingRequests),
  // The record commits first, then the call is the worker's: the answer waits for its result.
  route('post', '/v1/forwarding/requests', 'PostForwardingRequests', one, createForwardingRequest, { afterCommit: awaitForward }),
  route('get', '/v1/forwarding/requests/{id}', 'GetForwardingRequestsId', one, retrieveForwardingRequest),
];
