'use strict';
/**
 * An open-loop, constant-rate load generator: request i is due at t0 + i/rate, whatever happened to the
 * earlier ones, and its latency is counted from when it was due (so a slow server cannot hide its
 * queueing: no coordinated omission). autocannon's `overallRate` is not used for fixed-rate figures because
 * it sends each connection's per-second quota back to back at the start of every second — bursts of the
 * whole second's load — rather than one request every 1/rate seconds.
 */
const http = require('node:http');
const { performance } = require('node:perf_hooks');

/**
 * @param {object} o
 * @param {string} o.base        http://host:port
 * @param {number} o.rate        requests per second
 * @param {number} o.durationS   seconds of sending
 * @param {(i: number) => {method: string, path: string, headers: object, body?: string}} o.request
 * @param {number} [o.sockets]   keep-alive sockets at most (requests beyond wait for one, and that wait counts)
 * @param {number} [o.maxInFlight] a request falling due while this many are unanswered is not sent but counted
 *                                 as `dropped`: a server that cannot keep up shows it, and the run stays bounded
 * @returns {Promise<{due, sent, dropped, ok, failed, statuses, latenciesMs: number[], dueAtMs: number[], durationS,
 *   achievedRate, sustained}>} `dueAtMs[k]` is when the request of `latenciesMs[k]` was due (performance.now())
 */
function paced({ base, rate, durationS, request, sockets = 64, maxInFlight = 256, timeoutMs = 30_000 }) {
  const url = new URL(base);
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });
  const total = Math.round(rate * durationS);
  const latenciesMs = [];
  const dueAtMs = [];
  const statuses = {};
  let due = 0;
  let sent = 0;
  let dropped = 0;
  let done = 0;
  let ok = 0;
  let failed = 0;
  const t0 = performance.now();
  let lastDone = t0;

  return new Promise((resolve) => {
    let finished = false;
    function finish() {
      if (finished) return;
      finished = true;
      agent.destroy();
      const durationS = (lastDone - t0) / 1000;
      const achievedRate = ok / durationS;
      // Sustained: nothing dropped or failed, and it kept within 5% of the rate asked for.
      const sustained = dropped === 0 && failed === 0 && achievedRate >= rate * 0.95;
      resolve({ due, sent, dropped, ok, failed, statuses, latenciesMs, dueAtMs, durationS, achievedRate, sustained });
    }

    function fire(i, dueAt) {
      const r = request(i);
      const req = http.request(
        {
          agent,
          method: r.method,
          hostname: url.hostname,
          port: url.port,
          path: r.path,
          headers: { ...r.headers, ...(r.body ? { 'content-length': Buffer.byteLength(r.body) } : {}) },
          timeout: timeoutMs,
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            const now = performance.now();
            lastDone = now;
            statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
            if (res.statusCode >= 200 && res.statusCode < 300) {
              ok++;
              latenciesMs.push(now - dueAt);
              dueAtMs.push(dueAt);
            } else failed++;
            if (++done === sent && due === total) finish();
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => {
        failed++;
        statuses.error = (statuses.error ?? 0) + 1;
        if (++done === sent && due === total) finish();
      });
      if (r.body) req.write(r.body);
      req.end();
    }

    function tick() {
      const now = performance.now();
      const dueNow = Math.min(total, Math.floor(((now - t0) / 1000) * rate) + 1);
      while (due < dueNow) {
        const i = due++;
        if (sent - done >= maxInFlight) {
          dropped++;
          continue;
        }
        sent++;
        fire(i, t0 + (i * 1000) / rate);
      }
      if (due < total) {
        const nextDue = t0 + (due * 1000) / rate;
        setTimeout(tick, Math.max(0, nextDue - performance.now()));
      } else if (done === sent) finish();
    }
    if (total === 0) return finish();
    tick();
  });
}

module.exports = { paced };
