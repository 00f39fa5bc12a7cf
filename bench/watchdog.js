'use strict';
// Preloaded into the Sandbank server by bench/run.js and bench/clock.js (and the worker by bench/clock.js) (`node -r ./bench/watchdog.js dist/src/server.js`).
// It changes nothing in the server; it only makes the server shut down (SIGTERM, its own graceful
// path) when the benchmark process goes away, even if that process was killed with SIGKILL.
if (process.send) {
  process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  // The IPC channel alone must not keep the server alive.
  if (process.channel && typeof process.channel.unref === 'function') process.channel.unref();
}
