import { createBatcher } from '../../src/lib/batcher';

test('calls made together run as one batch and each caller gets its own result', async () => {
  const batches: number[][] = [];
  const double = createBatcher(async (items: number[]) => {
    batches.push(items);
    return items.map((i) => i * 2);
  });
  expect(await Promise.all([1, 2, 3].map(double))).toEqual([2, 4, 6]);
  expect(batches).toEqual([[1, 2, 3]]);
});

test('batches hold at most maxItems, and calls made while a batch runs wait for it', async () => {
  const batches: number[][] = [];
  let running = 0;
  let maxRunning = 0;
  let started!: () => void;
  const firstStarted = new Promise<void>((resolve) => (started = resolve));
  const echo = createBatcher(
    async (items: number[]) => {
      started();
      running++;
      maxRunning = Math.max(maxRunning, running);
      batches.push(items);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      return items;
    },
    { maxItems: 2 },
  );
  const first = echo(1);
  // The rest are called while the first batch runs (a timer could fire before it starts, on a busy machine).
  await firstStarted;
  const rest = [2, 3, 4, 5, 6].map(echo);
  expect(await Promise.all([first, ...rest])).toEqual([1, 2, 3, 4, 5, 6]);
  expect(batches).toEqual([[1], [2, 3], [4, 5], [6]]);
  expect(maxRunning).toBe(1);
});

test('a failing batch rejects its own callers only', async () => {
  const check = createBatcher(async (items: number[]) => {
    if (items.includes(0)) throw new Error('zero');
    return items;
  });
  const failed = Promise.all([check(0), check(1)]);
  await expect(failed).rejects.toThrow('zero');
  expect(await check(2)).toBe(2);
});

test('a runner returning the wrong number of results rejects the batch', async () => {
  const wrong = createBatcher(async (items: number[]) => items.slice(1));
  await expect(Promise.all([wrong(1), wrong(2)])).rejects.toThrow('1 results for 2 items');
});
