import { route } from '../../../kernel/route';
import { OBJECT } from './serializer';
import { advanceTestClock, createTestClock, deleteTestClock, listTestClocks, retrieveTestClock } from './service';

const one = { object: OBJECT };

export const routes = [
  route('get', '/v1/test_helpers/test_clocks', 'GetTestHelpersTestClocks', { ...one, list: true }, listTestClocks),
  route('post', '/v1/test_helpers/test_clocks', 'PostTestHelpersTestClocks', one, createTestClock),
  route('get', '/v1/test_helpers/test_clocks/{test_clock}', 'GetTestHelpersTestClocksTestClock', one, retrieveTestClock),
  route('delete', '/v1/test_helpers/test_clocks/{test_clock}', 'DeleteTestHelpersTestClocksTestClock', one, deleteTestClock),
  route('post', '/v1/test_helpers/test_clocks/{test_clock}/advance', 'PostTestHelpersTestClocksTestClockAdvance', one, advanceTestClock),
];
