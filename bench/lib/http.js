'use strict';
/**
 * A tiny JSON client over node:http with keep-alive, for setup and for the scripted loops
 * (autocannon drives the fixed-shape load). Every call resolves with {status, body, at} where `at`
 * is performance.now() when the whole response had arrived.
 */
const http = require('node:http');
const { performance } = require('node:perf_hooks');

const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 1024 });

/**
 * A request sent on a kept-alive socket that the server closed meanwhile (its idle timeout) fails with
 * ECONNRESET before the server read it; it is sent again once on a fresh socket, as Node's documentation advises.
 */
function request(base, method, path, opts = {}) {
  return attempt(base, method, path, opts).catch((e) => {
    if (e.code === 'ECONNRESET' && e.reusedSocket) return attempt(base, method, path, opts);
    throw e;
  });
}

function attempt(base, method, path, { token, body, timeoutMs = 70_000, headers = {} } = {}) {
  const url = new URL(path, base);
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        method,
        hostname: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        headers: {
          accept: 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(payload !== undefined
            ? {
                'content-type': headers['content-type'] ?? 'application/json',
                'content-length': Buffer.byteLength(payload),
              }
            : {}),
          ...headers,
        },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const at = performance.now();
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed = text;
          if ((res.headers['content-type'] ?? '').includes('json') && text) {
            try {
              parsed = JSON.parse(text);
            } catch {
              /* keep the text */
            }
          }
          resolve({ status: res.statusCode, body: parsed, at });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out after ${timeoutMs} ms`)));
    req.on('error', (e) => reject(Object.assign(e, { reusedSocket: req.reusedSocket })));
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** Like request(), but throws unless the status is one of `ok`. */
async function expect(ok, base, method, path, opts) {
  const res = await request(base, method, path, opts);
  if (!ok.includes(res.status)) {
    throw new Error(
      `${method} ${path} → ${res.status}: ${typeof res.body === 'string' ? res.body : JSON.stringify(res.body)}`.slice(
        0,
        600,
      ),
    );
  }
  return res;
}

function closeAgent() {
  agent.destroy();
}

module.exports = { request, expect, closeAgent };
