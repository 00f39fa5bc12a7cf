'use strict';
// CPU accounting for the benchmarks (Linux /proc): how busy the processes under test were over an
// interval, and how much every other program on the machine used ("other": a shared machine's
// noise). bench/run.js and bench/deliveries.js both use it.

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');

let clockTicks = 100;
try {
  clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  /* keep 100 */
}

/** { user, total } CPU ticks of one process (utime, utime + stime). */
function procTicks(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const user = Number(fields[11]);
    return { user, total: user + Number(fields[12]) };
  } catch {
    return null;
  }
}

/** Ticks of a process and its children (a cluster's API processes), summed. */
function treeTicks(pid) {
  const own = procTicks(pid);
  if (own === null) return null;
  let children = [];
  try {
    children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  } catch {
    /* no children listed: the process alone */
  }
  for (const child of children) {
    const t = procTicks(child);
    if (t !== null) {
      own.user += t.user;
      own.total += t.total;
    }
  }
  return own;
}

/**
 * Ticks of every process a spec matches, by spec label then pid (backends come and go). A spec is
 * a command name ('postgres'), or { label, comm, keep(cmdline) } to count only some of its processes.
 */
function namedTicks(specs) {
  const byLabel = Object.fromEntries(specs.map((s) => [s.label, new Map()]));
  if (specs.length === 0) return byLabel;
  let pids;
  try {
    pids = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  for (const pid of pids) {
    let comm;
    try {
      comm = fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    for (const spec of specs) {
      if (spec.comm !== comm) continue;
      if (spec.keep) {
        let cmdline = '';
        try {
          cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
        } catch {
          continue;
        }
        if (!spec.keep(cmdline)) continue;
      }
      const t = procTicks(pid);
      if (t !== null) byLabel[spec.label].set(pid, t);
    }
  }
  return byLabel;
}

/**
 * Only the PostgreSQL processes that work for `database`: its backends and the server's own
 * (writer, checkpointer…); other databases' backends are other programs' load.
 */
function postgresOf(database) {
  return {
    label: 'postgres',
    comm: 'postgres',
    keep: (cmdline) => {
      // A backend's title: "postgres: [15/main: ]<user> <database> <host>(<port>) <state>".
      const backend = /^postgres: (?:\S+: )?\S+ (\S+) [^ ]*\(\d+\)/.exec(cmdline);
      return !backend || backend[1] === database;
    },
  };
}

/** { user, busy } ticks of the whole machine (all cores), from /proc/stat; idle and iowait are not busy. */
function machineTicks() {
  try {
    const cpu = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = cpu;
    return { user: user + nice, busy: user + nice + system + irq + softirq + steal };
  } catch {
    return null;
  }
}

/**
 * `pids`: processes by label ({ server: 1234 }); `names`: specs (see namedTicks) whose processes
 * count as one ('postgres', 'redis-server'). This process is counted as `self`.
 */
function cpuSnapshot(pids = {}, names = []) {
  return {
    at: process.hrtime.bigint(),
    pids: Object.fromEntries(Object.entries(pids).map(([label, pid]) => [label, pid ? treeTicks(pid) : null])),
    named: namedTicks(names.map((n) => (typeof n === 'string' ? { label: n, comm: n } : n))),
    machine: machineTicks(),
    self: process.cpuUsage(),
  };
}

/**
 * CPU used during the interval (`seconds` long), in % of one core, per label and name of the snapshots, `self` (this
 * process), `machine` (all of it, kernel included), and `other`: user-space CPU of every other
 * program on the machine (kernel network time is left out of it). A high `other` means something
 * else competed for the cores.
 */
function cpuPercent(before, after) {
  const seconds = Number(after.at - before.at) / 1e9;
  const pct = (ticks) => Math.round((ticks / clockTicks / seconds) * 100);
  const out = { seconds };
  let counted = 0; // user ticks of what is measured, to leave out of `other`
  for (const label of Object.keys(before.pids)) {
    const b = before.pids[label];
    const a = after.pids[label];
    out[label] = a && b ? pct(a.total - b.total) : null;
    if (a && b) counted += a.user - b.user;
  }
  for (const name of Object.keys(before.named || {})) {
    if (!before.named || !after.named) {
      out[name] = null;
      continue;
    }
    let total = 0;
    for (const [pid, t] of after.named[name]) {
      const b = before.named[name].get(pid);
      total += t.total - (b ? b.total : 0);
      counted += t.user - (b ? b.user : 0);
    }
    out[name] = pct(total);
  }
  const self = process.cpuUsage(before.self);
  out.self = Math.round(((self.user + self.system) / 1e6 / seconds) * 100);
  const selfUserTicks = (self.user / 1e6) * clockTicks;
  out.machine = null;
  out.other = null;
  if (before.machine && after.machine) {
    out.machine = pct(after.machine.busy - before.machine.busy);
    out.other = Math.max(0, pct(after.machine.user - before.machine.user - counted - selfUserTicks));
  }
  return out;
}

/** User-space CPU of the machine over one second, in % of one core. */
async function idleCheck() {
  const a = machineTicks();
  await new Promise((r) => setTimeout(r, 1000));
  const b = machineTicks();
  return a && b ? Math.round(((b.user - a.user) / clockTicks) * 100) : null;
}

module.exports = { cpuSnapshot, cpuPercent, idleCheck, postgresOf };
