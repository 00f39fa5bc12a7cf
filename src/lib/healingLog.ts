import type { Logger } from './logger';

// Failures that heal on their own (Redis away, a PostgreSQL restart, a transaction that could not
// start in time and is retried) come by the hundred during one outage. Each cause logs one warn
// line, without a stack, when it first occurs; what repeats within the interval is counted and
// logged as one line with the count when the interval ends. Only what does not heal logs at error.

export const HEALING_INTERVAL_MS = 10_000;

interface Window {
  readonly startedMs: number;
  /** Occurrences since the line that opened the window. */
  repeated: number;
  fields: Record<string, unknown>;
  readonly message: string;
  timer: NodeJS.Timeout;
}

export class HealingLog {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly logger: Logger,
    private readonly intervalMs = HEALING_INTERVAL_MS,
  ) {}

  /** One occurrence of `cause` (its kind: a message and an error code, never an id). */
  warn(cause: string, fields: Record<string, unknown>, message: string): void {
    const open = this.windows.get(cause);
    if (open) {
      open.repeated++;
      open.fields = fields;
      return;
    }
    this.logger.warn({ ...fields, cause, count: 1 }, message);
    this.open(cause, fields, message);
  }

  private open(cause: string, fields: Record<string, unknown>, message: string): void {
    const window: Window = { startedMs: Date.now(), repeated: 0, fields, message, timer: undefined as unknown as NodeJS.Timeout };
    window.timer = setTimeout(() => this.close(cause), this.intervalMs);
    window.timer.unref();
    this.windows.set(cause, window);
  }

  private close(cause: string): void {
    const window = this.windows.get(cause);
    this.windows.delete(cause);
    if (!window || window.repeated === 0) return;
    const seconds = Math.round((Date.now() - window.startedMs) / 1000);
    this.logger.warn({ ...window.fields, cause, count: window.repeated, seconds }, `${window.message} (${window.repeated} more in ${seconds} s)`);
    // The line just logged stands for this interval too: the next occurrences are counted into it.
    this.open(cause, window.fields, window.message);
  }

  /** Logs what is counted and not yet logged (at shutdown). */
  flush(): void {
    for (const cause of [...this.windows.keys()]) {
      const window = this.windows.get(cause)!;
      clearTimeout(window.timer);
      this.windows.delete(cause);
      if (window.repeated > 0) this.logger.warn({ ...window.fields, cause, count: window.repeated }, `${window.message} (${window.repeated} more)`);
    }
  }
}

const byLogger = new WeakMap<Logger, HealingLog>();

/** The logger's healing log: every part of a process that logs to it counts into one. */
export function healingLog(logger: Logger): HealingLog {
  let log = byLogger.get(logger);
  if (!log) byLogger.set(logger, (log = new HealingLog(logger)));
  return log;
}

/**
 * A cause's name for an error: its code (Prisma's, PostgreSQL's, Node's), else its message with
 * numbers and ids taken out ("Missing key for job # …"), so one kind of failure is one cause.
 */
export function causeOf(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown; meta?: { code?: unknown } } | undefined;
  if (typeof e?.code === 'string') return e.code;
  if (typeof e?.meta?.code === 'string') return e.meta.code;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  return message
    .replace(/\b[a-z]+_[A-Za-z0-9]+\b/g, '…')
    .replace(/\d+/g, '#')
    .slice(0, 80);
}
