'use strict';
/**
 * Child servers for the benchmarks: spawn, wait until listening, sample memory and CPU from /proc,
 * stop with SIGTERM (SIGKILL after a grace period). Linux only (/proc).
 */
const { spawn } = require('node:child_process');
const { readFileSync } = require('node:fs');

const CLK_TCK = 100; // sysconf(_SC_CLK_TCK) on Linux x86-64/arm64

/**
 * Spawns `node [nodeArgs] script [args]` and resolves once a stdout line matches `ready`
 * (its first capture group is returned as `url`). Output is kept (last 200 lines) for error reports.
 */
function startChild({ name, script, args = [], nodeArgs = [], env = {}, cwd, ready, timeoutMs = 60_000 }) {
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines = [];
  const keep = (prefix) => (chunk) => {
    for (const l of chunk.toString('utf8').split('\n')) {
      if (!l) continue;
      lines.push(`${prefix}${l}`);
      if (lines.length > 200) lines.shift();
    }
  };
  child.stderr.on('data', keep('! '));
  let exited = null;
  const exit = new Promise((resolve) => child.on('exit', (code, signal) => resolve((exited = { code, signal }))));
  return new Promise((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => fail(new Error(`${name} did not start within ${timeoutMs} ms`)), timeoutMs);
    function fail(e) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${e.message}\n--- ${name} output ---\n${lines.join('\n')}`));
    }
    child.on('error', fail);
    exit.then(({ code, signal }) => fail(new Error(`${name} exited early (code ${code}, signal ${signal})`)));
    child.stdout.on('data', function onData(chunk) {
      keep('')(chunk);
      buffered += chunk.toString('utf8');
      const m = ready.exec(buffered);
      if (!m) return;
      clearTimeout(timer);
      child.stdout.off('data', onData);
      child.stdout.on('data', keep(''));
      resolve({
        name,
        pid: child.pid,
        url: m[1],
        child,
        output: () => lines.join('\n'),
        get exited() {
          return exited;
        },
        /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit. */
        async stop(graceMs = 15_000) {
          if (exited) return exited;
          child.kill('SIGTERM');
          const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
          const r = await exit;
          clearTimeout(killer);
          return r;
        },
      });
    });
  });
}

/** VmRSS and VmHWM (peak RSS) of a process, in MB (10^6 bytes); null once it is gone. */
function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rss: (kb('VmRSS') * 1024) / 1e6, hwm: (kb('VmHWM') * 1024) / 1e6 };
  } catch {
    return null;
  }
}

/** User + system CPU time of a process so far, in milliseconds; NaN once it is gone. */
function cpuMsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK; // utime, stime
  } catch {
    return NaN;
  }
}

/** Busy and total jiffies of the whole machine (for "how loaded was it" figures). */
function machineCpu() {
  const first = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = first[3] + (first[4] || 0);
  const total = first.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

/**
 * Samples the RSS of some processes every `everyMs` and keeps the peak per labelled phase.
 * `phase(label)` starts a phase; `peaks()` answers {label: {process name: peak MB}}.
 */
class RssSampler {
  constructor(procs, everyMs = 100) {
    this.procs = procs; // [{name, pid}]
    this.current = 'start';
    this.byPhase = new Map();
    this.timer = setInterval(() => this.sample(), everyMs);
    this.timer.unref();
    this.sample();
  }

  sample() {
    let phase = this.byPhase.get(this.current);
    if (!phase) this.byPhase.set(this.current, (phase = {}));
    for (const p of this.procs) {
      const m = memoryOf(p.pid);
      if (m && !(phase[p.name] >= m.rss)) phase[p.name] = m.rss;
    }
  }

  phase(label) {
    this.sample();
    this.current = label;
    this.sample();
  }

  peaks() {
    this.sample();
    return Object.fromEntries(this.byPhase);
  }

  stop() {
    clearInterval(this.timer);
  }
}

module.exports = { startChild, memoryOf, cpuMsOf, machineCpu, RssSampler };
