import { route } from '../../../kernel/route';
import { OBJECT } from './serializer';
import { createStripecliSession } from './service';

export const routes = [
  // The answer carries the session's signing secret: its idempotent copy is stored sealed.
  route('post', '/v1/stripecli/sessions', 'PostStripecliSessions', { object: OBJECT }, createStripecliSession, { responseHasSecret: true, oneStatement: () => true }),
];
