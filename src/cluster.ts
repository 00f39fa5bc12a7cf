import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import type { Logger } from './lib/logger';

// API_PROCESSES > 1: the first process prepares the database and secrets (and runs the workers
// under `npm start`), then forks that many API processes sharing the listening port through
// node's cluster. They hold nothing another process needs (state is in PostgreSQL and Redis),
// so any of them may answer any request.

/** The message a primary sends its API processes to stop as a signal would. */
export const SHUTDOWN_MESSAGE = 'sandbank:shutdown';

/** A process that exits on its own is started again after this, as compose's `restart:` does. */
const RESTART_DELAY_MS = 1_000;

export const isApiChild = (): boolean => cluster.isWorker;

/** API_PROCESSES, with 0 meaning one per core. */
export const apiProcessCount = (setting: number): number => setting || availableParallelism();

export interface ApiProcesses {
  /** Asks each to finish its requests and exit; resolves once all have (or were killed after `graceMs`). */
  stop(graceMs: number): Promise<void>;
}

/**
 * Forks `count` API processes (re-running this entry point) and restarts any that dies. Resolves
 * once the first listens: the others start after it, one at a time, so on busy cores the first
 * answers after one start's CPU rather than `count` starts competing (the cluster sends requests
 * only to processes that listen), and a restart of one never waits for its siblings.
 */
export function forkApiProcesses(count: number, logger: Logger): Promise<ApiProcesses> {
  let stopping = false;
  const live = new Set<Worker>();
  // `first`: the start's own child; it exiting before it listens fails the start (a bad setting
  // or an unreachable database would fail every restart too) instead of restarting forever.
  const fork = (first = false): Promise<void> =>
    new Promise((resolve, reject) => {
      const child = cluster.fork();
      let listened = false;
      live.add(child);
      child.once('listening', () => {
        listened = true;
        resolve();
      });
      child.once('exit', (code, signal) => {
        live.delete(child);
        if (first && !listened) {
          stopping = true;
          reject(new Error(`the first API process exited before it listened (code ${code}, signal ${signal})`));
          return;
        }
        resolve();
        if (stopping) return;
        logger.error({ pid: child.process.pid, code, signal }, 'an API process exited; starting another');
        setTimeout(() => void fork(), RESTART_DELAY_MS).unref();
      });
    });
  const rest = async () => {
    for (let i = 1; i < count && !stopping; i++) await fork();
    if (!stopping) logger.info({ processes: count }, 'api processes listening');
  };
  return fork(true).then(() => {
    void rest();
    return {
      async stop(graceMs: number) {
        stopping = true;
        const exits = [...live].map((child) => new Promise<void>((resolve) => (child.isDead() ? resolve() : child.once('exit', () => resolve()))));
        for (const child of live) if (child.isConnected()) child.send(SHUTDOWN_MESSAGE);
        const timer = setTimeout(() => {
          for (const child of live) child.process.kill('SIGKILL');
        }, graceMs);
        await Promise.all(exits);
        clearTimeout(timer);
      },
    };
  });
}
