import { createLimiter } from '../../src/lib/limiter';

test('runs at most `limit` calls at once, the rest in the order they came, and a failure frees its slot', async () => {
  const limit = createLimiter(2);
  let running = 0;
  let most = 0;
  const started: number[] = [];
  const task = (i: number) =>
    limit(async () => {
      started.push(i);
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      if (i === 1) throw new Error('task 1 failed');
      return i * 10;
    });
  const results = await Promise.allSettled([0, 1, 2, 3, 4].map(task));
  expect(most).toBe(2);
  expect(started).toEqual([0, 1, 2, 3, 4]);
  expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([0, 'task 1 failed', 20, 30, 40]);
  // Every slot came back: as many as the limit run at once again.
  let together = 0;
  let peak = 0;
  await Promise.all(
    [0, 1, 2].map(() =>
      limit(async () => {
        peak = Math.max(peak, ++together);
        await new Promise((r) => setTimeout(r, 5));
        together--;
      }),
    ),
  );
  expect(peak).toBe(2);
});
