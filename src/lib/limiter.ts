// At most `limit` calls of `run` at once; the rest wait their turn, first come first served.

export type Limiter = <T>(run: () => Promise<T>) => Promise<T>;

export function createLimiter(limit: number): Limiter {
  let running = 0;
  const waiting: (() => void)[] = [];
  const release = (): void => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };
  return async <T>(run: () => Promise<T>): Promise<T> => {
    // A finishing call hands its slot straight to the next waiter, so `running` never overshoots.
    if (running < limit) running++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await run();
    } finally {
      release();
    }
  };
}
