import { route } from '../../../kernel/route';
import { OBJECT } from './serializer';
import { listEvents, retrieveEvent } from './service';

export const routes = [
  route('get', '/v1/events', 'GetEvents', { object: OBJECT, list: true }, listEvents),
  route('get', '/v1/events/{id}', 'GetEventsId', { object: OBJECT }, retrieveEvent),
];
