import { browserTestMode } from './browser';

test('without chromium the browser tests are skipped, except under CI, where they fail', () => {
  expect(browserTestMode({}, true)).toBe('run');
  expect(browserTestMode({ CI: 'true' }, true)).toBe('run');
  expect(browserTestMode({}, false)).toBe('skip');
  expect(browserTestMode({ CI: 'false' }, false)).toBe('skip');
  expect(browserTestMode({ CI: 'true' }, false)).toBe('fail');
  expect(browserTestMode({ CI: '1' }, false)).toBe('fail');
});
