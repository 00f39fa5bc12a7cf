import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort, redisAnswers } from '../test/helpers/services';

export { freePort };

// What the fault suite runs and breaks: a PostgreSQL cluster and a redis-server of its own (never
// the shared ones), and the API and the worker as supervised processes that come back after they
// die, as compose's `restart:` brings them back.

const run = promisify(execFile);

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it holds; false when `timeoutMs` passed first. */
export async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs: number, everyMs = 100): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await Promise.resolve(check()).catch(() => false)) return true;
    if (Date.now() > deadline) return false;
    await sleep(everyMs);
  }
}

/** The newest installed PostgreSQL's programs (Debian keeps them out of PATH). */
function postgresBin(): string {
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = readdirSync(base).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) if (existsSync(join(base, v, 'bin', 'initdb'))) return join(base, v, 'bin');
  }
  return ''; // on PATH
}

/** Whether this machine can run a PostgreSQL cluster of the suite's own (initdb, pg_ctl; runuser as root). */
export function clusterToolsAvailable(): boolean {
  const bin = postgresBin();
  const onPath = (program: string) => (process.env.PATH ?? '').split(':').some((dir) => existsSync(join(dir, program)));
  const pg = bin ? existsSync(join(bin, 'pg_ctl')) : onPath('initdb') && onPath('pg_ctl');
  return pg && onPath('redis-server') && (!asRoot || onPath('runuser'));
}

/** PostgreSQL refuses to run as root: as root, its programs run as the `postgres` user. */
const asRoot = process.getuid?.() === 0;
function pgCommand(program: string, args: string[]): [string, string[]] {
  const bin = postgresBin();
  const path = bin ? join(bin, program) : program;
  return asRoot ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args];
}

export class PostgresCluster {
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  /** initdb into a temporary folder and start it on a free port. */
  static async start(root: string): Promise<PostgresCluster> {
    const dir = join(root, 'pg');
    const port = await freePort();
    const cluster = new PostgresCluster(dir, port);
    const data = join(dir, 'data');
    await run('mkdir', ['-p', data]);
    if (asRoot) {
      chownSync(root, uidOf('postgres'), -1);
      await run('chown', ['-R', 'postgres', dir]);
    }
    await run(...pgCommand('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']));
    await cluster.startServer();
    return cluster;
  }

  url(database: string): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/${database}`;
  }

  async startServer(): Promise<void> {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
    await run(...pgCommand('pg_ctl', ['-D', join(this.dir, 'data'), '-o', options, '-l', join(this.dir, 'server.log'), '-w', '-t', '60', 'start']));
  }

  /** `pg_ctl stop -m <mode>`: fast rolls back sessions and stops; immediate stops at once (crash recovery on start). */
  async stop(mode: 'fast' | 'immediate'): Promise<void> {
    await run(...pgCommand('pg_ctl', ['-D', join(this.dir, 'data'), '-m', mode, '-w', '-t', '60', 'stop']));
  }

  async restart(mode: 'fast' | 'immediate'): Promise<void> {
    await this.stop(mode);
    await this.startServer();
  }

}

function uidOf(user: string): number {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${user}:`));
  if (!line) throw new Error(`no ${user} user: PostgreSQL can't run as root`);
  return Number(line.split(':')[2]);
}

/** A redis-server that keeps nothing on disk, as the shared one: a restart comes back empty. */
export class RedisServer {
  private child: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    private readonly log: string,
  ) {}

  static async start(root: string): Promise<RedisServer> {
    const server = new RedisServer(await freePort(), join(root, 'redis.log'));
    await server.startProcess();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async startProcess(): Promise<void> {
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--logfile', this.log], {
      stdio: 'ignore',
    });
    if (!(await waitFor(() => this.ping(), 10_000))) throw new Error('redis-server did not start');
  }

  /** SIGKILL: everything it held is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    // A child killed by a signal has a null exitCode: its 'exit' has passed and would never come again.
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  async flushAll(): Promise<void> {
    const redis = new Redis(this.url, { maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined);
    try {
      await redis.flushall();
    } finally {
      redis.disconnect();
    }
  }

  ping(): Promise<boolean> {
    return redisAnswers(this.url);
  }


  async stop(): Promise<void> {
    await this.kill();
  }
}

export interface ExitRecord {
  at: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Whether the suite killed it; any other exit is a crash. */
  expected: boolean;
}

/**
 * A service process (the API or the worker) that is started again a second after it exits, as
 * compose's `restart: unless-stopped` does, until `stop()`.
 */
export class Supervised {
  private child: ChildProcess | undefined;
  private stopping = false;
  private killing = false;
  private readonly log: WriteStream;
  readonly exits: ExitRecord[] = [];
  /** When a process printed its ready line. */
  private readonly readyAt: number[] = [];
  /** The CPU time each process says its start took (`startCpuMs` in its ready line), by the time of that line. */
  private readonly startCpu = new Map<number, number>();
  /** Every line its processes wrote: when, and its level (pino's number; 0 for a line that is not a log line: a stack, a stray print). */
  private readonly lines: { at: number; level: number }[] = [];

  constructor(
    readonly name: string,
    private readonly args: string[],
    private readonly env: Record<string, string>,
    logFile: string,
    /** The log message a process writes once it serves. */
    private readonly readyMessage: string,
    private readonly restartDelayMs = 1000,
  ) {
    this.log = createWriteStream(logFile, { flags: 'a' });
  }

  start(): void {
    const child = spawn(process.execPath, this.args, { env: { ...process.env, ...this.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let partial = '';
    let partialErr = '';
    const count = (lines: string[]) => {
      const at = Date.now();
      for (const line of lines) if (line !== '') this.lines.push({ at, level: Number(/^\{"level":(\d+)/.exec(line)?.[1] ?? 0) });
    };
    child.stderr!.on('data', (chunk: Buffer) => {
      const lines = (partialErr + chunk.toString('utf8')).split('\n');
      partialErr = lines.pop()!;
      count(lines);
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop()!;
      count(lines);
      const ready = lines.find((l) => l.includes(`"msg":"${this.readyMessage}"`));
      if (ready !== undefined) {
        const at = Date.now();
        this.readyAt.push(at);
        const cpu = /"startCpuMs":(\d+)/.exec(ready);
        if (cpu) this.startCpu.set(at, Number(cpu[1]));
      }
    });
    child.stdout!.pipe(this.log, { end: false });
    child.stderr!.pipe(this.log, { end: false });
    child.once('exit', (code, signal) => {
      this.exits.push({ at: Date.now(), code, signal, expected: this.killing || this.stopping });
      this.killing = false;
      if (this.child === child) this.child = undefined;
      if (!this.stopping) setTimeout(() => !this.stopping && this.start(), this.restartDelayMs);
    });
    this.child = child;
  }

  /** Lines written since `since`: warnings, errors (and fatal), and lines that are no log line (stacks, prints). */
  linesSince(since: number): { warn: number; error: number; other: number } {
    const recent = this.lines.filter((l) => l.at >= since);
    return { warn: recent.filter((l) => l.level === 40).length, error: recent.filter((l) => l.level >= 50).length, other: recent.filter((l) => l.level === 0).length };
  }

  /** Whether a process started after `since` is ready. */
  readySince(since: number): boolean {
    return this.readyAt.some((at) => at >= since);
  }

  /** When a process printed its ready line after `since`. */
  readyAfter(since: number): number | undefined {
    return this.readyAt.find((at) => at >= since);
  }

  /** The CPU time the start of the process that was ready after `since` took, if it said. */
  startCpuAfter(since: number): number | undefined {
    const at = this.readyAfter(since);
    return at === undefined ? undefined : this.startCpu.get(at);
  }

  get alive(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  get crashes(): ExitRecord[] {
    return this.exits.filter((e) => !e.expected);
  }

  /** `kill -9`; the supervisor starts it again after its restart delay. */
  async kill9(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.killing = true;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** SIGTERM, a graceful stop that the supervisor restarts after, as compose's `restart` after `docker kill -s TERM`. */
  async terminate(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.killing = true;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }

  /** The pid of the process running now. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** SIGTERM (a graceful stop), no restart. */
  async stop(): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (child) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    this.log.end();
  }
}

/** A temporary folder the suite's services live in (PostgreSQL needs it traversable by its user). */
export function makeRoot(): { root: string; remove(): void } {
  const root = mkdtempSync(join(tmpdir(), 'sandbank-faults-'));
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}
