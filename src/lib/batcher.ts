// Group commit for many concurrent callers: calls made while a batch is in flight (or within
// `maxWaitMs`) are run together by one `run` call, and each caller gets its own result. One
// statement for many jobs costs far less CPU than one statement per job.

export interface BatcherOptions {
  /** Largest batch handed to `run`. */
  maxItems?: number;
  /** How long the first call of a batch may wait for company; 0 = until the next turn of the event loop. */
  maxWaitMs?: number;
  /** Batches running at once; 1 also keeps batches from contending for the same rows. */
  maxConcurrent?: number;
}

/** `run` gets the items and returns one result per item, in the same order. */
export type BatchRunner<I, O> = (items: I[]) => Promise<O[]>;

export function createBatcher<I, O>(run: BatchRunner<I, O>, options: BatcherOptions = {}): (item: I) => Promise<O> {
  const maxItems = options.maxItems ?? 100;
  const maxWaitMs = options.maxWaitMs ?? 0;
  const maxConcurrent = options.maxConcurrent ?? 1;
  let queue: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  let inFlight = 0;
  /** Cancels the pending flush, if one is scheduled. */
  let timer: (() => void) | null = null;
  const schedule = (): void => {
    if (maxWaitMs > 0) {
      const t = setTimeout(flush, maxWaitMs);
      timer = () => clearTimeout(t);
    } else {
      const t = setImmediate(flush);
      timer = () => clearImmediate(t);
    }
  };

  const flush = (): void => {
    timer = null;
    while (queue.length > 0 && inFlight < maxConcurrent) {
      const batch = queue.slice(0, maxItems);
      queue = queue.slice(batch.length);
      inFlight++;
      void (async () => {
        try {
          const results = await run(batch.map((b) => b.item));
          if (results.length !== batch.length) throw new Error(`batch returned ${results.length} results for ${batch.length} items`);
          batch.forEach((b, i) => b.resolve(results[i]));
        } catch (err) {
          for (const b of batch) b.reject(err);
        } finally {
          inFlight--;
          // What arrived meanwhile goes at once: it has already waited for this batch.
          if (queue.length > 0 && timer === null) flush();
        }
      })();
    }
  };

  return (item: I) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (inFlight >= maxConcurrent) return;
      if (queue.length >= maxItems) {
        timer?.();
        flush();
      } else if (timer === null) schedule();
    });
}
