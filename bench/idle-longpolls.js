'use strict';
/**
 * 10,000 idle long-polls on one instance (issue 4): opens N concurrent `GET /v1/tool-calls/{id}?wait=60`
 * on a Tollgate child process over PostgreSQL, samples the server's RSS and CPU while they idle, then
 * decides every call and measures how fast all the waiters answer.
 *
 *   npm run build && node bench/idle-longpolls.js [--polls 10000] [--calls 100]
 *
 * Uses DATABASE_URL as the admin URL (default postgres://postgres@127.0.0.1:5432/postgres), creates and drops
 * its own database, talks only to 127.0.0.1, and stops by itself.
 */
require('reflect-metadata');
const { spawn } = require('node:child_process');
const { readFileSync } = require('node:fs');
const http = require('node:http');
const { join } = require('node:path');
const { randomBytes } = require('node:crypto');
const { Client } = require('pg');

const ROOT = join(__dirname, '..');
const { mintToken } = require(join(ROOT, 'dist/src/infrastructure/auth/jwt-verifier.js'));

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const POLLS = arg('polls', 10_000);
const CALLS = arg('calls', 100);
const SECRET = 'bench-idle-longpolls-secret-0123456789abcdef';
const ADMIN_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

function rssMb(pid) {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)[1]);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}
function cpuSeconds(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
function request(method, url, token, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        agent,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', (e) => reject(Object.assign(e, { message: `${e.message} (${method} ${url})` })));
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

async function main() {
  const db = `tollgate_bench_idle_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${db}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${db}`;
  const port = 20000 + Math.floor(Math.random() * 20000);
  const nodeArgs = (process.env.BENCH_NODE_ARGS || '').split(' ').filter(Boolean); // e.g. --cpu-prof
  const child = spawn(process.execPath, [...nodeArgs, join(ROOT, 'bin/tollgate.js'), 'serve'], {
    env: {
      ...process.env,
      DATABASE_URL: url.toString(),
      TOLLGATE_JWT_SECRET: SECRET,
      PORT: String(port),
      TOLLGATE_RATE_LIMIT: '0',
      TOLLGATE_MAX_WAITS_PER_TOKEN: String(POLLS + 10),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await new Promise((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => ((out += d), /listening on/.test(out) && resolve()));
      child.on('exit', (c) => reject(new Error(`server exited ${c}`)));
      setTimeout(() => reject(new Error('server did not start')), 60_000).unref();
    });
    const base = `http://127.0.0.1:${port}`;
    const bot = await mintToken(SECRET, { sub: 'bot', roles: ['agent'] }, '1h');
    const ann = await mintToken(SECRET, { sub: 'ann', roles: ['approver'] }, '1h');
    const ids = [];
    for (let i = 0; i < CALLS; i++) {
      await request('POST', `${base}/v1/conversations`, bot, { id: `idle-${i}` });
      const r = await request('POST', `${base}/v1/conversations/idle-${i}/tool-calls`, bot, {
        toolCalls: [{ toolName: 'needs_person', arguments: { i } }],
      });
      ids.push(r.body.toolCalls[0].id);
    }
    const idle = rssMb(child.pid);

    const opened = Date.now();
    const answers = [];
    const polls = [];
    for (let i = 0; i < POLLS; i++) {
      const id = ids[i % CALLS];
      polls.push(
        request('GET', `${base}/v1/tool-calls/${id}?wait=60`, bot).then((r) =>
          answers.push({ at: Date.now(), id, status: r.body && r.body.status }),
        ),
      );
      // Paced: a burst of 10,000 connects would overflow the listen backlog (511) and be reset.
      if (i % 100 === 99) await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 5000)); // all connected and waiting
    const openMs = Date.now() - opened;
    const cpu0 = cpuSeconds(child.pid);
    await new Promise((r) => setTimeout(r, 10_000)); // idling
    const idleCpu = (cpuSeconds(child.pid) - cpu0) / 10;
    const waiting = rssMb(child.pid);
    const answeredEarly = answers.length;

    const decidedAt = new Map();
    const started = Date.now();
    for (const id of ids) {
      await request('POST', `${base}/v1/tool-calls/${id}/decision`, ann, { decision: 'approve' });
      decidedAt.set(id, Date.now());
    }
    await Promise.all(polls);
    const allAnswered = Date.now() - started;
    const wake = answers.slice(answeredEarly).map((a) => a.at - decidedAt.get(a.id));
    const approved = answers.filter((a) => a.status === 'approved').length;

    console.log('\nIdle long-polls on one instance (PostgreSQL, LISTEN/NOTIFY + batch re-check)');
    console.log(
      `  long-polls held open        ${POLLS} on ${CALLS} pending calls (opened in ${openMs} ms incl. 5 s settle)`,
    );
    console.log(`  answered before decisions   ${answeredEarly}`);
    console.log(
      `  server RSS idle → waiting   ${idle.rss.toFixed(0)} MB → ${waiting.rss.toFixed(0)} MB (peak ${rssMb(child.pid).hwm.toFixed(0)} MB)`,
    );
    console.log(`  server CPU while idling     ${(idleCpu * 100).toFixed(1)} % of one core`);
    console.log(`  all answered after deciding ${allAnswered} ms for ${CALLS} sequential decisions`);
    console.log(
      `  wake latency (decision → answer)  p50 ${pct(wake, 50)} ms, p99 ${pct(wake, 99)} ms, max ${Math.max(...wake)} ms`,
    );
    console.log(`  answered approved           ${approved} / ${POLLS}`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
