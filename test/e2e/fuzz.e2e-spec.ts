/**
 * Property-based fuzzing of every REST body and query (CONTRACT §3, §11): whatever arrives, the
 * service answers below 500; every 4xx is an RFC 9457 problem (`application/problem+json`) with a
 * string `code` and a numeric `status` equal to the HTTP status; every 2xx body is JSON (save the
 * Prometheus text, the checkpoint JWS and the audit export, which are checked for their own shape).
 *
 * Inputs, per route: (a) arbitrary JSON values, (b) near-valid bodies (a valid body with a field
 * dropped, mutated, given a wrong type, an extreme number, a huge/odd/NUL/lone-surrogate string, deep
 * nesting, an unknown or duplicated key), (c) raw bytes and broken JSON sent as application/json,
 * (d) random Content-Types and Content-Encodings. Tokens are the right ones for each route, so the
 * fuzz gets past 401/403 into validation and the domain; each property has its own tenant, so a halt
 * or a grant of one cannot blunt another.
 *
 * Reproduce a failure: fast-check prints `{ seed, path }` and the shrunk counterexample; rerun that one
 * property with FUZZ_SEED=<seed> FUZZ_PATH=<path> … jest test/e2e/fuzz -t '<its name>'. Server ids are
 * random, so a replay is exact for bodies and queries, not for the ids the server minted.
 * FUZZ_RUNS=<factor> scales every property's run count (default 1); FUZZ_STATS=1 prints the answers
 * each property got (how far past validation it reached).
 */
import fc from 'fast-check';
import { gzipSync, deflateSync } from 'node:zlib';
import { stringify as toYaml } from 'yaml';
import { startTestServer, TestServer } from '../support/server';

const SCALE = Number(process.env.FUZZ_RUNS ?? 1) || 1;
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const PATH = process.env.FUZZ_PATH;

let server: TestServer;

/* ------------------------------------------------------------------------------------------------
 * Talking to the service
 * --------------------------------------------------------------------------------------------- */

interface Payload {
  bytes: string | Uint8Array;
  /** Content-Type; left out when undefined. */
  type?: string;
  /** Content-Encoding; left out when undefined. */
  encoding?: string;
}

interface Call {
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  token?: string;
  payload?: Payload;
  headers?: Record<string, string>;
  /** 2xx bodies that are not JSON: Prometheus text, the checkpoint, the export. */
  kind?: 'json' | 'metrics' | 'checkpoint' | 'export';
}

interface Answer {
  status: number;
  type: string;
  text: string;
  json?: any;
}

/** Status counts per property, printed at the end: how deep the fuzz reached. */
const stats = new Map<string, Map<string, number>>();
let currentProperty = '';

async function send(call: Call, counted = true): Promise<Answer> {
  const headers: Record<string, string> = { ...call.headers };
  if (call.token) headers.authorization = `Bearer ${call.token}`;
  const p = call.payload;
  if (p?.type !== undefined) headers['content-type'] = p.type;
  if (p?.encoding !== undefined) headers['content-encoding'] = p.encoding;
  // Bytes, never a JS string: fetch would add `text/plain` of its own to a string body.
  const body =
    p === undefined ? undefined : typeof p.bytes === 'string' ? Buffer.from(p.bytes, 'utf8') : Buffer.from(p.bytes);
  let res: Response;
  try {
    res = await fetch(server.url + call.path, {
      method: call.method,
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(20_000),
    });
  } catch (e) {
    throw new Error(
      `${call.method} ${call.path}: no answer (${(e as Error).message}; cause: ${String((e as { cause?: unknown }).cause)})`,
    );
  }
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  let json: any;
  if (/json/.test(type)) {
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
  }
  const key = `${res.status}${json?.code ? ` ${json.code}` : ''}`;
  if (counted) {
    const counts = stats.get(currentProperty) ?? new Map<string, number>();
    counts.set(key, (counts.get(key) ?? 0) + 1);
    stats.set(currentProperty, counts);
  }
  remember(json);
  return { status: res.status, type, text, json };
}

function preview(v: string | Uint8Array | undefined, max = 400): string {
  if (v === undefined) return '(none)';
  const s = typeof v === 'string' ? v : `bytes(${v.length}) ${Buffer.from(v).toString('hex').slice(0, max)}`;
  return s.length > max ? `${JSON.stringify(s.slice(0, max))}… (${s.length} chars)` : JSON.stringify(s);
}

/** The invariants every answer must hold; throws a readable Error when one does not. */
function check(call: Call, a: Answer): void {
  const fail = (why: string): never => {
    throw new Error(
      `${why}\n  request: ${call.method} ${call.path.length > 300 ? call.path.slice(0, 300) + '…' : call.path}` +
        `\n  content-type: ${call.payload?.type ?? '(none)'}  content-encoding: ${call.payload?.encoding ?? '(none)'}` +
        `\n  body: ${preview(call.payload?.bytes)}\n  answer: ${a.status} ${a.type} ${preview(a.text, 600)}`,
    );
  };
  if (a.status >= 500) fail(`a ${a.status}: bad input must never yield a 5xx`);
  if (a.status >= 400) {
    if (!/^application\/problem\+json/.test(a.type))
      fail(`a ${a.status} whose Content-Type is not application/problem+json`);
    if (a.json === undefined || typeof a.json !== 'object') fail(`a ${a.status} whose body is not a JSON object`);
    if (typeof a.json.code !== 'string' || a.json.code === '') fail(`a ${a.status} problem without a string code`);
    if (a.json.status !== a.status)
      fail(`a ${a.status} problem whose status member is ${JSON.stringify(a.json.status)}`);
    return;
  }
  if (a.status < 200 || a.status >= 300) fail(`an unexpected status ${a.status}`);
  switch (call.kind ?? 'json') {
    case 'metrics':
      if (!/^text\/plain/.test(a.type)) fail('/metrics answered without text/plain');
      return;
    case 'checkpoint':
      if (/json/.test(a.type)) {
        if (typeof a.json?.jws !== 'string') fail('a JSON checkpoint without jws');
      } else if (!/^[\w-]+\.[\w-]+\.[\w-]+$/.test(a.text)) fail('a checkpoint that is not a compact JWS');
      return;
    case 'export':
      if (/ndjson/.test(a.type)) {
        for (const line of a.text.split('\n').filter(Boolean)) {
          try {
            JSON.parse(line);
          } catch {
            fail(`an NDJSON export line that is not JSON: ${preview(line)}`);
          }
        }
      } else if (!/^text\/csv/.test(a.type) || !a.text.startsWith('seq,'))
        fail('an export that is neither NDJSON nor CSV with its header');
      return;
    default:
      if (a.status === 204 && a.text === '') return;
      try {
        JSON.parse(a.text);
      } catch {
        fail('a 2xx body that is not JSON');
      }
  }
}

async function hit(call: Call): Promise<Answer> {
  const a = await send(call);
  check(call, a);
  return a;
}

/** Setup steps must succeed as the contract says; their failure is not the fuzz's finding. */
async function must(call: Call, ...statuses: number[]): Promise<any> {
  const a = await send(call, false);
  if (!statuses.includes(a.status))
    throw new Error(`setup: ${call.method} ${call.path} answered ${a.status} ${a.text.slice(0, 500)}`);
  return a.json;
}

/** Payloads print short in fast-check's reports: a 100 000-level nesting would drown the counterexample. */
function shown(p: Payload): Payload {
  const describe = () =>
    `Payload(${[p.type === undefined ? 'no content-type' : `type ${JSON.stringify(p.type)}`, p.encoding === undefined ? '' : `encoding ${JSON.stringify(p.encoding)}`, preview(p.bytes, 300)].filter(Boolean).join(', ')})`;
  Object.defineProperty(p, fc.toStringMethod, { value: describe, enumerable: false, configurable: true });
  return p;
}

const jsonPayload = (v: unknown): Payload => shown({ bytes: ser(v), type: 'application/json' });

/** Ids the server handed out (conversations, tool calls), any tenant: the path-id fuzz reuses them. */
const knownIds: string[] = [];
function remember(v: unknown, depth = 0): void {
  if (knownIds.length >= 400 || depth > 4 || v === null || typeof v !== 'object') return;
  if (Array.isArray(v)) return v.slice(0, 8).forEach((x) => remember(x, depth + 1));
  for (const [k, x] of Object.entries(v)) {
    if ((k === 'id' || k === 'conversationId') && typeof x === 'string' && x.length <= 128 && !knownIds.includes(x))
      knownIds.push(x);
    else remember(x, depth + 1);
  }
}

function runs(n: number): number {
  return Math.max(1, Math.round(n * SCALE));
}

/** fast-check's own report names the seed, the path and the shrunk counterexample. */
async function fuzz<T>(name: string, n: number, arb: fc.Arbitrary<T>, body: (x: T) => Promise<void>): Promise<void> {
  currentProperty = name;
  await fc.assert(fc.asyncProperty(arb, body), {
    numRuns: runs(n),
    seed: SEED,
    path: SEED === undefined ? undefined : PATH,
    interruptAfterTimeLimit: 30_000,
  });
}

/* ------------------------------------------------------------------------------------------------
 * Serialising bodies the way an attacker might write them
 * --------------------------------------------------------------------------------------------- */

/** Literal JSON text, spliced in as is: 1e400, -0, 30-digit integers, 100 000 levels of nesting. */
class Raw {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text.length > 80 ? `Raw(${this.text.slice(0, 40)}…${this.text.length} chars)` : `Raw(${this.text})`;
  }
}
/** An object as its list of members: keys may repeat, and `__proto__` is a member like any other. */
class Entries {
  constructor(readonly entries: [string, unknown][]) {}
}

const raw = (text: string) => new Raw(text);

function ser(v: unknown): string {
  if (v instanceof Raw) return v.text;
  if (v instanceof Entries) return `{${v.entries.map(([k, x]) => `${JSON.stringify(k)}:${ser(x)}`).join(',')}}`;
  if (Array.isArray(v)) return `[${v.map(ser).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}:${ser(x)}`)
      .join(',')}}`;
  if (typeof v === 'number') return Object.is(v, -0) ? '-0' : Number.isFinite(v) ? String(v) : 'null';
  if (v === undefined) return 'null';
  return JSON.stringify(v);
}

function toTree(v: unknown): unknown {
  if (v instanceof Raw || v instanceof Entries) return v;
  if (Array.isArray(v)) return v.map(toTree);
  if (v !== null && typeof v === 'object') return new Entries(Object.entries(v).map(([k, x]) => [k, toTree(x)]));
  return v;
}

/** A place in a tree: `holder[index]` (an array element) or `holder[index][1]` (an object member). */
interface Slot {
  holder: unknown[];
  index: number;
  member: boolean;
}

function slotsOf(tree: unknown, box: unknown[]): Slot[] {
  const out: Slot[] = [{ holder: box, index: 0, member: false }];
  const walk = (node: unknown) => {
    if (node instanceof Entries) {
      node.entries.forEach((e, i) => {
        out.push({ holder: node.entries, index: i, member: true });
        walk(e[1]);
      });
    } else if (Array.isArray(node)) {
      node.forEach((x, i) => {
        out.push({ holder: node, index: i, member: false });
        walk(x);
      });
    }
  };
  walk(tree);
  return out;
}

type MutationKind = 'drop' | 'replace' | 'unknownKey' | 'duplicate' | 'wrap';
interface Mutation {
  at: number;
  kind: MutationKind;
  key: string;
  value: unknown;
  first: boolean;
}

/** Applies the mutations to a copy of `base`, each at the `at`-th place (modulo the places there are). */
function mutate(base: unknown, mutations: Mutation[]): unknown {
  const box: unknown[] = [toTree(base)];
  for (const m of mutations) {
    const slots = slotsOf(box[0], box);
    const s = slots[m.at % slots.length];
    const get = () => (s.member ? (s.holder[s.index] as [string, unknown])[1] : s.holder[s.index]);
    const set = (x: unknown) =>
      s.member ? ((s.holder[s.index] as [string, unknown])[1] = x) : (s.holder[s.index] = x);
    const root = s.holder === box;
    switch (m.kind) {
      case 'drop':
        if (root) box[0] = raw('');
        else s.holder.splice(s.index, 1);
        break;
      case 'replace':
        set(toTree(m.value));
        break;
      case 'wrap':
        set(m.first ? [get()] : new Entries([[m.key, get()]]));
        break;
      case 'unknownKey': {
        const target = get();
        if (target instanceof Entries)
          target.entries.splice(m.first ? 0 : target.entries.length, 0, [m.key, toTree(m.value)]);
        else if (s.member) s.holder.splice(s.index + 1, 0, [m.key, toTree(m.value)]);
        else if (Array.isArray(target)) target.push(toTree(m.value));
        else set(new Entries([[m.key, toTree(m.value)]]));
        break;
      }
      case 'duplicate':
        // The same key twice in one object: JSON.parse keeps the last; a careless reader might keep the first.
        if (s.member)
          s.holder.splice(m.first ? s.index : s.index + 1, 0, [
            (s.holder[s.index] as [string, unknown])[0],
            toTree(m.value),
          ]);
        else if (!root) s.holder.splice(s.index + 1, 0, toTree(m.value));
        else set(toTree(m.value));
        break;
    }
  }
  return box[0];
}

/* ------------------------------------------------------------------------------------------------
 * Arbitraries
 * --------------------------------------------------------------------------------------------- */

const ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const char16 = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)); // lone surrogates included
const printable = fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c));

const NASTY = [
  '',
  ' ',
  '\t',
  '\r\n',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x\ud83d',
  '\ude00x',
  '\ud83d\ude00',
  '\u202e',
  '\ufeff',
  '\uffff',
  '\u2028',
  'é',
  'ǅ',
  '𝔘𝔫𝔦',
  '%00',
  '%',
  '../../etc/passwd',
  "'; DROP TABLE events; --",
  '${7*7}',
  '{{7*7}}',
  '<script>',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'null',
  'undefined',
  'true',
  '0',
  '-0',
  '1e308',
  'NaN',
  'Infinity',
  '2000-01-01T00:00:00Z',
  '0000-01-01',
  '+275760-09-13T00:00:00.000Z',
  'get_*',
  '*',
  '?',
  'shell(cmd=rm *)',
  'requester',
  'approve',
  'always_allow',
  'tenant',
  'agent',
  'conversation',
  'succeeded',
  'pending',
  'admin',
  'seq:1',
  'W10',
  '\\',
  '"',
  "'",
  '=cmd|calc',
  '\u0000\u0000\u0000',
];
const LENGTHS = [127, 128, 129, 200, 201, 256, 257, 500, 501, 1000, 1001, 4000, 4001, 16000, 16001, 65536, 70000];
const HUGE = 1_100_000; // over the 1 MiB body limit on its own

const nastyString = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
  { weight: 2, arbitrary: fc.string({ unit: char16, maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
);
const repeatTo = (n: number, c: string) => c.repeat(Math.ceil(n / c.length)).slice(0, n);
const longString = (lengths = LENGTHS) =>
  fc
    .tuple(fc.constantFrom(...lengths), fc.constantFrom('x', 'é', '😀', 'a\u0000', '\ud800'))
    .map(([n, c]) => repeatTo(n, c));
const anyString = fc.oneof(
  { weight: 6, arbitrary: nastyString },
  { weight: 1, arbitrary: longString([...LENGTHS, HUGE]) },
);

const nest = (depth: number, open: string, close: string, leaf = '1') =>
  raw(open.repeat(depth) + leaf + close.repeat(depth));
const DEEP = [64, 1000, 2000, 3000, 5000, 20000, 100000].flatMap((d) => [nest(d, '[', ']'), nest(d, '{"a":', '}')]);
const WIDE = [
  raw(`[${Array(100000).fill('0').join(',')}]`),
  raw(`{${Array.from({ length: 20000 }, (_, i) => `"k${i}":${i}`).join(',')}}`),
];
const bigShape = fc.constantFrom(...DEEP, ...WIDE);

const extremeNumber = fc.oneof(
  fc.constantFrom(
    1e308,
    -1e308,
    -0,
    5e-324,
    -5e-324,
    Number.MAX_SAFE_INTEGER,
    Number.MAX_SAFE_INTEGER + 2,
    -Number.MAX_SAFE_INTEGER - 2,
    2 ** 31,
    -(2 ** 31),
    2 ** 63,
    1e21,
    0.1 + 0.2,
    1 - Number.EPSILON,
    1 + Number.EPSILON,
    0.6,
    0.5999999999999999,
    60,
    61,
    64,
    65,
    1000,
    1001,
    86400,
    86401,
  ),
  fc.constantFrom(
    ...[
      '1e400',
      '-1e400',
      '1e-400',
      '123456789012345678901234567890',
      '-123456789012345678901234567890',
      '-0.0',
      '0e0',
      '1E2',
      '1.0',
      '0.0000000000000000000000001',
    ].map(raw),
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.bigInt({ min: -(2n ** 100n), max: 2n ** 100n }).map((b) => raw(b.toString())),
);

/** Keys for unknown members and free JSON: the ones every JS object already has come often. */
const keyArb = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      'id',
      'toolName',
      'arguments',
      'decision',
      'scope',
      'outcome',
      'reason',
      'extra',
      '\u0000',
      'a\u0000',
      '\ud800',
      'Ä',
      '$where',
      'a.b',
      'a[0]',
      '0',
      'toolCalls',
      'defaults',
      'rules',
    ),
  },
  { weight: 2, arbitrary: fc.string({ maxLength: 16 }) },
);
/** Free JSON (`metadata`, `arguments`, `output`): any keys at all are valid there. */
const freeObject = fc.dictionary(
  fc.oneof({ weight: 3, arbitrary: fc.string({ maxLength: 8 }) }, { weight: 1, arbitrary: keyArb }),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 4 },
);

const weird: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom<unknown>(null, true, false, 0, 1, -1, '', [], {}, 'x') },
  { weight: 3, arbitrary: extremeNumber },
  { weight: 4, arbitrary: anyString },
  { weight: 2, arbitrary: bigShape },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.array(nastyString, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(keyArb, fc.oneof(nastyString, extremeNumber), { maxKeys: 3 }) },
);

const mutation: fc.Arbitrary<Mutation> = fc.record({
  at: fc.nat(),
  kind: fc.constantFrom<MutationKind>('drop', 'replace', 'replace', 'unknownKey', 'duplicate', 'wrap'),
  key: keyArb,
  value: weird,
  first: fc.boolean(),
});

/** Any JSON value, plus whatever JS values JSON.stringify makes of odd things (dates, maps, typed arrays…). */
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue(),
  fc
    .anything({
      withBigInt: false,
      withDate: true,
      withMap: true,
      withSet: true,
      withTypedArray: true,
      withSparseArray: true,
      withNullPrototype: true,
      withBoxedValues: true,
      withObjectString: true,
    })
    .map((x) => {
      try {
        return raw(JSON.stringify(x) ?? '');
      } catch {
        return raw('');
      }
    }),
  weird,
);

const BROKEN = [
  '',
  ' ',
  '{',
  '}',
  '[',
  '"',
  'nul',
  'tru',
  '{"a":}',
  '{"a":1,}',
  "{'a':1}",
  '{a:1}',
  '{"a" 1}',
  '{"a":1}}',
  '{"a":1}x',
  '[1,]',
  '\ufeff{}',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  '{"a":"\\x00"}',
  '{"a":"\\q"}',
  '{"a": 1e400}',
  '{"a": -0}',
  '{"a": 01}',
  '{"a": .5}',
  '{"a": +1}',
  '{"a": NaN}',
  '{"a": Infinity}',
  '{"a":123456789012345678901234567890}',
  'null',
  '0',
  '"str"',
  '[]',
  'true',
  '{"__proto__":{"admin":true}}',
  '{"constructor":{"prototype":{"admin":true}}}',
  '{"a":1}\u0000',
  '{"a":"\u0001\u001f"}',
  '/* c */ {}',
  '{"a":1} // c',
  '\u0000',
  '{"\\u0000":1}',
  '{"toolCalls":[{"toolName":"get_time","arguments":{}}]',
  '{"decision":"approve"',
  '{"outcome":"succeeded",}',
];

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=UTF-16',
  'application/json; charset=utf-16le',
  'application/json; charset=latin1',
  'application/json; charset=koi8-r',
  'application/json; charset=nonsense',
  'application/json;charset="utf-8"',
  'APPLICATION/JSON',
  'application/problem+json',
  'application/merge-patch+json',
  'application/vnd.api+json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=zz',
  'multipart/form-data',
  'text/plain',
  'text/html',
  'text/json',
  'application/yaml',
  'application/x-yaml',
  'text/yaml',
  'text/yaml; charset=utf-16',
  'text/yaml; charset=nonsense',
  'application/octet-stream',
  'application/xml',
  '*/*',
  'application/*',
  '',
  ';',
  'application/json; boundary=',
  'application/json; charset=',
  'application/json;;',
  'image/png',
  'application/json, text/plain',
];
const contentType = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom<string | undefined>(undefined, ...CONTENT_TYPES) },
  { weight: 1, arbitrary: fc.string({ unit: printable, maxLength: 40 }) },
);
const contentEncoding = fc.constantFrom<string | undefined>(
  undefined,
  undefined,
  undefined,
  'gzip',
  'gzip',
  'deflate',
  'br',
  'identity',
  'compress',
  'x-nope',
  'gzip, identity',
  'GZIP',
  '',
);

/** (c) raw bytes and broken JSON, as application/json. */
function brokenJson(valid: fc.Arbitrary<unknown>): fc.Arbitrary<Payload> {
  return fc.oneof(
    fc.uint8Array({ maxLength: 256 }).map((bytes): Payload => ({ bytes, type: 'application/json' })),
    fc.constantFrom(...BROKEN).map((bytes): Payload => ({ bytes, type: 'application/json' })),
    fc
      .tuple(
        valid,
        fc.nat(),
        fc.constantFrom('cut', 'insert', 'delete'),
        fc.oneof(fc.constantFrom('{', '}', '[', ']', '"', ',', ':', '\\', ' ', '\u0000', 'x'), nastyString),
      )
      .map(([v, at, how, s]): Payload => {
        const text = ser(v);
        const i = at % (text.length + 1);
        const bytes =
          how === 'cut'
            ? text.slice(0, i)
            : how === 'insert'
              ? text.slice(0, i) + s + text.slice(i)
              : text.slice(0, i) + text.slice(i + 1);
        return { bytes, type: 'application/json' };
      }),
  );
}

/** (d) a body, valid or not, under a random Content-Type and Content-Encoding (sometimes really compressed). */
function oddMedia(valid: fc.Arbitrary<unknown>): fc.Arbitrary<Payload> {
  return fc
    .tuple(fc.oneof(valid.map(ser), fc.uint8Array({ maxLength: 64 })), contentType, contentEncoding, fc.boolean())
    .map(([bytes, type, encoding, compress]): Payload => {
      if (compress && (encoding === 'gzip' || encoding === 'deflate')) {
        const buf = Buffer.from(bytes);
        return { bytes: encoding === 'gzip' ? gzipSync(buf) : deflateSync(buf), type, encoding };
      }
      return { bytes, type, encoding };
    });
}

/** (a)–(d) for a body route, around its valid bodies (which come through too, so the domain is reached). */
function bodies(valid: fc.Arbitrary<unknown>): fc.Arbitrary<Payload> {
  return fc
    .oneof(
      { weight: 3, arbitrary: valid.map(jsonPayload) },
      {
        weight: 7,
        arbitrary: fc
          .tuple(valid, fc.array(mutation, { minLength: 1, maxLength: 2 }))
          .map(([v, ms]) => jsonPayload(mutate(v, ms))),
      },
      { weight: 2, arbitrary: anyJson.map(jsonPayload) },
      { weight: 2, arbitrary: brokenJson(valid) },
      { weight: 2, arbitrary: oddMedia(valid) },
    )
    .map(shown);
}

/** Percent-encodes the UTF-8 of `s` (a lone surrogate becomes U+FFFD, as any client would send it). */
function enc(s: string): string {
  return [...Buffer.from(s, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9_.~-]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}

const validId = fc.stringMatching(ID);
const b64url = (s: string) => Buffer.from(s, 'utf8').toString('base64url');

/** Path segments as they reach the router: encoded odd strings, and raw bytes no client library would send. */
const RAW_SEGMENTS = [
  '%',
  '%%',
  '%ZZ',
  '%E0%A4%A',
  '%C0%AF',
  '%FF',
  '%FE%FF',
  '%00',
  'a%00b',
  '%2F',
  'a%2Fb',
  '..%2F..',
  '%2e%2e',
  '%252F',
  ';',
  ';x=1',
  '%3B',
  '*',
  '~',
  '%F0%9F%98',
  '%ED%A0%80',
  '%u0041',
  'x%',
  '%0A',
  '%0D%0A',
  '%20',
  '+',
  '%2B',
  '(',
  ')',
  "'",
  '%22',
  '%3C%3E',
  '%5C',
];
const pathSegment = fc.oneof(
  { weight: 2, arbitrary: validId },
  { weight: 3, arbitrary: nastyString.filter((s) => s !== '').map(enc) },
  { weight: 2, arbitrary: fc.constantFrom(...RAW_SEGMENTS) },
  {
    weight: 1,
    arbitrary: longString([129, 256, 1000, 4000])
      .map(enc)
      .map((s) => s.slice(0, 6000)),
  },
  { weight: 1, arbitrary: fc.uuid() },
);

const level = fc.constantFrom('deny', 'manual', 'confirm', 'notify', 'automatic');
const role = fc.constantFrom('approver', 'admin', 'requester', 'auditor', 'ops', 'agent');
const pattern = fc.oneof(
  fc.constantFrom(
    'get_*',
    '*',
    'shell(cmd=rm *)',
    'delete_source',
    'send_?mail',
    'x(a=1, b=*)',
    'fz_*',
    '**',
    '*a*a*a*b',
    'tool(arg=*,arg2=?)',
    'send_*',
    'get_time',
  ),
  fc.string({
    unit: fc.constantFrom('a', 'b', '_', '*', '?', '(', ')', '=', ',', ' ', '.', '\\', '[', ']', '$', '^', '+', '|'),
    minLength: 1,
    maxLength: 16,
  }),
);
const when = fc.record(
  {
    confidenceBelow: fc.double({ min: 0, max: 1, noNaN: true }),
    estimatedCostAbove: fc.double({ min: 0, max: 1e6, noNaN: true }),
  },
  { requiredKeys: [] },
);
const policyDoc = fc.record(
  {
    defaults: fc.record(
      {
        unknownTools: level,
        timeoutSeconds: fc.integer({ min: 1, max: 86400 }),
        approvers: fc.array(role, { minLength: 1, maxLength: 3 }),
        trustAgentFlags: fc.boolean(),
      },
      { requiredKeys: [] },
    ),
    rules: fc.array(
      fc.record(
        {
          match: pattern,
          level,
          when,
          requireRole: role,
          approvers: fc.array(role, { minLength: 1, maxLength: 3 }),
          timeoutSeconds: fc.integer({ min: 1, max: 86400 }),
          reason: fc.string({ minLength: 1, maxLength: 60 }),
        },
        { requiredKeys: ['match', 'level'] },
      ),
      { maxLength: 6 },
    ),
  },
  { requiredKeys: [] },
);

const toolBody = fc.record(
  {
    description: fc.string({ maxLength: 200 }),
    isReadOnly: fc.boolean(),
    requiresApproval: fc.boolean(),
    destructive: fc.boolean(),
  },
  { requiredKeys: [] },
);

const conversationBody = fc.record(
  {
    id: fc.oneof(fc.constantFrom('fz-conv-1', 'fz-conv-2', 'fz-conv-3'), validId),
    user: fc.record(
      {
        id: fc.oneof(fc.constantFrom('fz-user', 'fz-approver', 'fz-admin'), fc.string({ minLength: 1, maxLength: 40 })),
        roles: fc.array(role, { maxLength: 3 }),
        name: fc.string({ maxLength: 40 }),
      },
      { requiredKeys: ['id'] },
    ),
    title: fc.string({ maxLength: 80 }),
    metadata: freeObject,
  },
  { requiredKeys: [] },
);

const TOOL_NAMES = ['get_time', 'send_email', 'shell', 'delete_source', 'fz_manual', 'fz_auto', 'read_file'];
const args = fc.oneof(freeObject, fc.record({ cmd: fc.constantFrom('rm -rf /', 'ls', 'rm x', 'rm') }), fc.constant({}));
const proposedCall = fc.record(
  {
    id: fc.oneof(fc.constantFrom('c1', 'c2', 'c3'), validId),
    toolName: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...TOOL_NAMES) }, { weight: 1, arbitrary: validId }),
    arguments: args,
    annotations: fc.record(
      { isReadOnly: fc.boolean(), requiresApproval: fc.boolean(), destructive: fc.boolean() },
      { requiredKeys: [] },
    ),
    reason: fc.string({ maxLength: 60 }),
    confidence: fc.double({ min: 0, max: 1, noNaN: true }),
    estimatedCost: fc.oneof(fc.double({ min: 0, max: 1e308, noNaN: true, noDefaultInfinity: true }), fc.nat()),
    display: fc.record(
      {
        title: fc.string({ maxLength: 40 }),
        summary: fc.string({ maxLength: 80 }),
        fields: fc.array(fc.record({ label: fc.string({ maxLength: 20 }), value: fc.string({ maxLength: 40 }) }), {
          maxLength: 3,
        }),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['toolName', 'arguments'] },
);
const proposal = fc.record({ toolCalls: fc.array(proposedCall, { minLength: 1, maxLength: 4 }) });

const decisionBody = fc.oneof(
  fc.record(
    { decision: fc.constant('approve'), reason: fc.string({ maxLength: 60 }), arguments: args },
    { requiredKeys: ['decision'] },
  ),
  fc.record({ decision: fc.constant('reject'), reason: fc.string({ maxLength: 60 }) }, { requiredKeys: ['decision'] }),
  fc.record(
    {
      decision: fc.constant('always_allow'),
      reason: fc.string({ maxLength: 60 }),
      scope: fc.constantFrom('conversation', 'agent', 'tenant'),
    },
    { requiredKeys: ['decision'] },
  ),
);
const channel = fc.constantFrom<string | undefined>(
  undefined,
  undefined,
  'web',
  'cli',
  'api',
  'WEB',
  ' api ',
  'slack',
  'grpc',
  'policy',
  'system',
  '',
  'web, cli',
  'x'.repeat(300),
);

const resultBody = fc.record(
  {
    outcome: fc.constantFrom('succeeded', 'failed'),
    output: fc.oneof(fc.jsonValue({ maxDepth: 3 }), freeObject),
    error: fc.string({ maxLength: 100 }),
  },
  { requiredKeys: ['outcome'] },
);

const SIX_MONTHS_AGO = Date.now() - 200 * 86_400_000;
const purgeBody = fc.record({
  before: fc.oneof(
    fc
      .date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date(SIX_MONTHS_AGO), noInvalidDate: true })
      .map((d) => d.toISOString()),
    fc.constantFrom(
      '0000-01-01',
      '0001-01-01T00:00:00Z',
      '1000-01-01',
      '2000-02-30',
      '1969-12-31T23:59:59.999Z',
      '2000-01-01T00:00:00+14:00',
      '2000-01-01 garbage',
      '9999-12-31T23:59:59.999Z',
      '2000-01-01T24:00:00Z',
      '2000-01-01T00:00:00-23:59',
      '1900-01-01T00:00:00.123456789Z',
      '2000-01-01T00:00:00Z[UTC]',
    ),
  ),
  reason: fc.string({ minLength: 1, maxLength: 100 }),
});

/* ------------------------------------------------------------------------------------------------
 * Tenants and the resources the fuzz aims at
 * --------------------------------------------------------------------------------------------- */

interface Crew {
  tenant: string;
  agent: string;
  agent2: string;
  admin: string;
  approver: string;
  auditor: string;
}

const crews: Crew[] = [];

async function crew(tenant: string): Promise<Crew> {
  const t = { tenant };
  const c: Crew = {
    tenant,
    agent: await server.token('fz-agent', ['agent'], t),
    agent2: await server.token('fz-agent-2', ['agent'], t),
    admin: await server.token('fz-admin', ['admin'], t),
    approver: await server.token('fz-approver', ['approver'], t),
    auditor: await server.token('fz-auditor', ['auditor'], t),
  };
  crews.push(c);
  return c;
}

let serial = 0;

async function newConversation(c: Crew, body: Record<string, unknown> = {}): Promise<string> {
  const id = `fz-${++serial}`;
  await must({ method: 'POST', path: '/v1/conversations', token: c.agent, payload: jsonPayload({ id, ...body }) }, 201);
  return id;
}

async function proposeOne(c: Crew, conv: string, call: Record<string, unknown>): Promise<any> {
  const body = await must(
    {
      method: 'POST',
      path: `/v1/conversations/${conv}/tool-calls`,
      token: c.agent,
      payload: jsonPayload({ toolCalls: [call] }),
    },
    201,
  );
  return body.toolCalls[0];
}

/** A call held for a person: a tool never seen before, so no grant from an earlier always_allow covers it. */
async function pendingCall(c: Crew): Promise<string> {
  const conv = await newConversation(c, { user: { id: 'fz-user' } });
  const call = await proposeOne(c, conv, {
    toolName: `fz_pending_${++serial}`,
    arguments: { n: serial },
    annotations: { requiresApproval: true },
  });
  if (call.status !== 'pending') throw new Error(`setup: expected a pending call, got ${call.status}`);
  return call.id;
}

async function approvedCall(c: Crew): Promise<string> {
  const call = await proposeOne(c, await newConversation(c), {
    toolName: 'get_time',
    arguments: { tz: 'UTC' },
    annotations: { isReadOnly: true },
  });
  if (call.status !== 'approved') throw new Error(`setup: expected an approved call, got ${call.status}`);
  return call.id;
}

async function executedCall(c: Crew): Promise<string> {
  const id = await approvedCall(c);
  await must({ method: 'POST', path: `/v1/tool-calls/${id}/execution`, token: c.agent }, 200);
  return id;
}

/** A resource the fuzz may use up (decide, claim, complete): made when first needed, remade once spent. */
class Supply {
  private current?: string;
  constructor(private readonly make: () => Promise<string>) {}
  async get(): Promise<string> {
    return (this.current ??= await this.make());
  }
  spent(): void {
    this.current = undefined;
  }
}

/* ------------------------------------------------------------------------------------------------
 * The properties
 * --------------------------------------------------------------------------------------------- */

jest.setTimeout(180_000);

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  const lines = [...stats].map(
    ([name, counts]) =>
      `${name}: ${[...counts]
        .sort((a, b) => b[1] - a[1])
        .map(([k, n]) => `${k}×${n}`)
        .join(', ')}`,
  );
  if (process.env.FUZZ_STATS) console.log(`fuzz answers by property\n${lines.join('\n')}`);
  await server?.stop();
});

describe('fuzzing every REST body and query: never a 5xx, every 4xx a problem, every 2xx JSON', () => {
  it('PUT /v1/tools/{name}', async () => {
    const c = await crew('fz-tools');
    const name = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom('get_time', 'send_email', 'fz.tool:1', 'a', 'x'.repeat(128)).map(enc) },
      { weight: 2, arbitrary: validId.map(enc) },
      { weight: 2, arbitrary: pathSegment },
    );
    const who = fc.constantFrom<keyof Crew>('agent', 'admin', 'admin', 'agent2');
    await fuzz(
      'PUT /v1/tools/{name}',
      60,
      fc.record({ name, who, payload: bodies(toolBody) }),
      async ({ name, who, payload }) => {
        await hit({ method: 'PUT', path: `/v1/tools/${name}`, token: c[who], payload });
      },
    );
  });

  it('PUT /v1/policy as JSON', async () => {
    const c = await crew('fz-policy');
    const who = fc.constantFrom<keyof Crew>('admin', 'admin', 'admin', 'approver');
    await fuzz(
      'PUT /v1/policy (JSON)',
      60,
      fc.record({ who, payload: bodies(policyDoc) }),
      async ({ who, payload }) => {
        await hit({ method: 'PUT', path: '/v1/policy', token: c[who], payload });
      },
    );
    await hit({ method: 'GET', path: '/v1/policy', token: c.auditor });
  });

  it('PUT /v1/policy as YAML', async () => {
    const c = await crew('fz-policy-yaml');
    const laughs = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 10; i++)
      laughs.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(',')}]`,
      );
    const YAML_NASTY = [
      'a: &a [*a]',
      'rules: &r [*r]',
      'defaults: &d {approvers: *d}',
      'defaults: &d\n  approvers: [admin]\n  extra: *d',
      laughs.join('\n'),
      'rules: !!binary aGVsbG8=',
      'defaults: !!js/function "function(){}"',
      '--- !!set\n? a',
      'defaults:\n  timeoutSeconds: .inf',
      'defaults: {timeoutSeconds: .nan}',
      'rules:\n- match: !!str 1\n  level: deny',
      '? [a, b]\n: c',
      '<<: {defaults: {}}',
      '---\na: 1\n---\nb: 2',
      '%YAML 1.1\n---\ndefaults: {}',
      '%TAG ! tag:x,2000:\n--- !foo {}',
      'defaults: {timeoutSeconds: 0x10}',
      '{',
      ']',
      '\t\tdefaults:',
      'key: "\\ud800"',
      'rules: [{match: "\\ud800*", level: deny}]',
      'rules:\n  - match: "*"\n    level: deny\n    reason: "\\0"',
      'defaults: {approvers: [~]}',
      'rules: [{match: "*", level: confirm, when: {confidenceBelow: 1e400}}]',
      '['.repeat(5000),
      '- '.repeat(2000) + 'x',
      'defaults:\n  unknownTools: yes',
      '2001-12-14',
      '~',
      '',
      ' ',
      '#only a comment',
      '!!null',
      '!!map',
      '! {}',
      '&a',
      '*unknown',
      'defaults: *unknown',
      'rules: [{match: 2001-12-14, level: deny}]',
      'rules: [{match: [a], level: deny}]',
      'defaults: {timeoutSeconds: 1_000}',
      'rules:\n' + Array.from({ length: 1001 }, (_, i) => `  - {match: t${i}, level: deny}`).join('\n'),
      `rules: [{match: "${'*a'.repeat(3000)}b", level: deny}]`,
      'defaults: {approvers: [admin]}\nrules: [{match: "shell(cmd=rm *)", level: deny}]\n...\n--- junk',
      '\ufeffdefaults: {}',
      'defaults: {"\\0": 1}',
    ];
    const yamlType = fc.constantFrom(
      'application/yaml',
      'application/x-yaml',
      'text/yaml',
      'text/x-yaml',
      'application/yaml; charset=utf-8',
      'text/yaml; charset=utf-16',
      'application/yaml; charset=nope',
    );
    const text = fc.oneof(
      { weight: 3, arbitrary: policyDoc.map((d) => toYaml(d)) },
      {
        weight: 3,
        arbitrary: fc
          .tuple(policyDoc, fc.array(mutation, { minLength: 1, maxLength: 2 }))
          .map(([d, ms]) => ser(mutate(d, ms))),
      }, // JSON is YAML
      { weight: 3, arbitrary: fc.constantFrom(...YAML_NASTY) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 80 }) },
      {
        weight: 1,
        arbitrary: fc
          .array(
            fc.constantFrom(
              'a',
              ':',
              ' ',
              '\n',
              '-',
              '&x',
              '*x',
              '!',
              '[',
              ']',
              '{',
              '}',
              '"',
              "'",
              '|',
              '>',
              '#',
              '?',
              ',',
              '%',
              '@',
              '`',
              '<<',
            ),
            { maxLength: 40 },
          )
          .map((p) => p.join('')),
      },
    );
    await fuzz('PUT /v1/policy (YAML)', 60, fc.record({ bytes: text, type: yamlType }).map(shown), async (payload) => {
      await hit({ method: 'PUT', path: '/v1/policy', token: c.admin, payload });
    });
    await hit({ method: 'GET', path: '/v1/policy', token: c.auditor });
  });

  it('POST /v1/conversations', async () => {
    const c = await crew('fz-conv');
    const who = fc.constantFrom<keyof Crew>('agent', 'agent', 'agent2', 'auditor');
    await fuzz(
      'POST /v1/conversations',
      60,
      fc.record({ who, payload: bodies(conversationBody) }),
      async ({ who, payload }) => {
        await hit({ method: 'POST', path: '/v1/conversations', token: c[who], payload });
      },
    );
  });

  it('POST /v1/conversations/{id}/tool-calls', async () => {
    const c = await crew('fz-prop');
    await must(
      {
        method: 'PUT',
        path: '/v1/policy',
        token: c.admin,
        payload: jsonPayload({
          defaults: { unknownTools: 'automatic', timeoutSeconds: 3600 },
          rules: [
            { match: 'shell(cmd=rm *)', level: 'deny' },
            { match: 'delete_source', level: 'confirm', requireRole: 'admin', approvers: ['requester', 'admin'] },
            { match: 'fz_manual', level: 'manual' },
            { match: '*', when: { confidenceBelow: 0.6 }, level: 'confirm' },
            { match: '*', when: { estimatedCostAbove: 1000 }, level: 'notify' },
            { match: 'send_*', level: 'confirm' },
          ],
        }),
      },
      200,
    );
    await must(
      { method: 'PUT', path: '/v1/tools/read_file', token: c.admin, payload: jsonPayload({ isReadOnly: true }) },
      201,
    );
    const conversation = new Supply(() => newConversation(c, { user: { id: 'fz-user', roles: ['admin'] } }));
    await fuzz('POST /v1/conversations/{id}/tool-calls', 80, bodies(proposal), async (payload) => {
      const a = await hit({
        method: 'POST',
        path: `/v1/conversations/${await conversation.get()}/tool-calls`,
        token: c.agent,
        payload,
      });
      // A held call blocks the conversation: start another, so later runs reach the policy again.
      if ((a.status < 300 && a.json?.conversation?.status !== 'active') || a.json?.code === 'conversation_blocked')
        conversation.spent();
    });
  });

  it('random policies, then a whole lifecycle under each: propose, decide, claim, report', async () => {
    const c = await crew('fz-eval');
    const step = fc.record({
      policy: policyDoc,
      userRoles: fc.array(role, { maxLength: 2 }),
      calls: fc.array(proposedCall, { minLength: 1, maxLength: 3 }),
      decision: decisionBody,
      result: resultBody,
    });
    await fuzz('lifecycle under random policies', 25, step, async ({ policy, userRoles, calls, decision, result }) => {
      await hit({ method: 'PUT', path: '/v1/policy', token: c.admin, payload: jsonPayload(policy) });
      const conv = await newConversation(c, { user: { id: 'fz-admin', roles: userRoles } });
      const a = await hit({
        method: 'POST',
        path: `/v1/conversations/${conv}/tool-calls`,
        token: c.agent,
        payload: jsonPayload({ toolCalls: calls }),
      });
      for (const call of a.status < 300 ? (a.json.toolCalls as any[]) : []) {
        if (call.status === 'pending')
          await hit({
            method: 'POST',
            path: `/v1/tool-calls/${call.id}/decision`,
            token: c.admin,
            payload: jsonPayload(decision),
          });
        const claim = await hit({ method: 'POST', path: `/v1/tool-calls/${call.id}/execution`, token: c.agent });
        if (claim.status === 200)
          await hit({
            method: 'POST',
            path: `/v1/tool-calls/${call.id}/result`,
            token: c.agent,
            payload: jsonPayload(result),
          });
        await hit({ method: 'GET', path: `/v1/tool-calls/${call.id}`, token: c.auditor });
      }
    });
  });

  it('POST /v1/tool-calls/{id}/decision', async () => {
    const c = await crew('fz-dec');
    const other = await crew('fz-dec-other');
    const pending = new Supply(() => pendingCall(c));
    const decided = await pendingCall(c);
    await must(
      {
        method: 'POST',
        path: `/v1/tool-calls/${decided}/decision`,
        token: c.approver,
        payload: jsonPayload({ decision: 'reject', reason: 'setup' }),
      },
      200,
    );
    const foreign = await pendingCall(other);
    const target = fc.constantFrom('pending', 'pending', 'pending', 'pending', 'decided', 'foreign', 'missing');
    const who = fc.constantFrom<keyof Crew>('approver', 'approver', 'admin', 'admin', 'agent', 'auditor');
    await fuzz(
      'POST /v1/tool-calls/{id}/decision',
      60,
      fc.record({ target, who, channel, payload: bodies(decisionBody) }),
      async ({ target, who, channel, payload }) => {
        const id =
          target === 'pending'
            ? await pending.get()
            : target === 'decided'
              ? decided
              : target === 'foreign'
                ? foreign
                : 'tc_missing';
        const a = await hit({
          method: 'POST',
          path: `/v1/tool-calls/${id}/decision`,
          token: c[who],
          payload,
          headers: channel === undefined ? {} : { 'x-tollgate-channel': channel },
        });
        if (target === 'pending' && a.status < 300) pending.spent();
      },
    );
  });

  it('POST /v1/tool-calls/{id}/execution', async () => {
    const c = await crew('fz-exec');
    const approved = new Supply(() => approvedCall(c));
    const executed = await executedCall(c);
    const pending = await pendingCall(c);
    const target = fc.constantFrom('approved', 'approved', 'approved', 'executed', 'pending', 'missing');
    const who = fc.constantFrom<keyof Crew>('agent', 'agent', 'agent', 'agent2', 'approver');
    const payload = fc.option(bodies(anyJson), { nil: undefined });
    await fuzz(
      'POST /v1/tool-calls/{id}/execution',
      40,
      fc.record({ target, who, payload }),
      async ({ target, who, payload }) => {
        const id =
          target === 'approved'
            ? await approved.get()
            : target === 'executed'
              ? executed
              : target === 'pending'
                ? pending
                : 'tc_missing';
        const a = await hit({ method: 'POST', path: `/v1/tool-calls/${id}/execution`, token: c[who], payload });
        if (target === 'approved' && a.status < 300) approved.spent();
      },
    );
  });

  it('POST /v1/tool-calls/{id}/result', async () => {
    const c = await crew('fz-res');
    const executed = new Supply(() => executedCall(c));
    const approved = await approvedCall(c);
    const completed = await executedCall(c);
    await must(
      {
        method: 'POST',
        path: `/v1/tool-calls/${completed}/result`,
        token: c.agent,
        payload: jsonPayload({ outcome: 'succeeded' }),
      },
      200,
    );
    const target = fc.constantFrom('executed', 'executed', 'executed', 'executed', 'approved', 'completed', 'missing');
    const who = fc.constantFrom<keyof Crew>('agent', 'agent', 'agent', 'agent2');
    await fuzz(
      'POST /v1/tool-calls/{id}/result',
      60,
      fc.record({ target, who, payload: bodies(resultBody) }),
      async ({ target, who, payload }) => {
        const id =
          target === 'executed'
            ? await executed.get()
            : target === 'approved'
              ? approved
              : target === 'completed'
                ? completed
                : 'tc_missing';
        const a = await hit({ method: 'POST', path: `/v1/tool-calls/${id}/result`, token: c[who], payload });
        if (target === 'executed' && a.status < 300) executed.spent();
      },
    );
  });

  it('POST /v1/halt and /v1/resume', async () => {
    const c = await crew('fz-halt');
    const conv = await newConversation(c);
    await proposeOne(c, conv, { toolName: 'send_email', arguments: {} });
    const reason = fc.string({ minLength: 1, maxLength: 60 });
    const body = fc.oneof(
      fc.record({ scope: fc.constant('tenant'), reason }, { requiredKeys: ['scope'] }),
      fc.record(
        {
          scope: fc.constant('agent'),
          id: fc.oneof(fc.constant('fz-agent'), fc.string({ minLength: 1, maxLength: 40 })),
          reason,
        },
        { requiredKeys: ['scope', 'id'] },
      ),
      fc.record(
        { scope: fc.constant('conversation'), id: fc.oneof(fc.constant(conv), validId), reason },
        { requiredKeys: ['scope', 'id'] },
      ),
    );
    const route = fc.constantFrom('halt', 'halt', 'resume');
    const who = fc.constantFrom<keyof Crew>('admin', 'admin', 'admin', 'approver');
    await fuzz(
      'POST /v1/halt, /v1/resume',
      60,
      fc.record({ route, who, payload: bodies(body), thenResume: fc.boolean() }),
      async ({ route, who, payload, thenResume }) => {
        const a = await hit({ method: 'POST', path: `/v1/${route}`, token: c[who], payload });
        // Halting what is halted writes nothing: lift it half the time, so later halts are new ones again.
        if (route === 'halt' && a.status === 200 && thenResume) {
          await must(
            {
              method: 'POST',
              path: '/v1/resume',
              token: c.admin,
              payload: jsonPayload({ scope: a.json.scope, ...(a.json.id ? { id: a.json.id } : {}) }),
            },
            200,
          );
        }
      },
    );
    await hit({ method: 'GET', path: '/v1/status', token: c.auditor });
    for (const b of [{ scope: 'tenant' }, { scope: 'agent', id: 'fz-agent' }, { scope: 'conversation', id: conv }]) {
      await must({ method: 'POST', path: '/v1/resume', token: c.admin, payload: jsonPayload(b) }, 200);
    }
  });

  it('POST /v1/audit/purge', async () => {
    const c = await crew('fz-purge');
    await newConversation(c);
    const who = fc.constantFrom<keyof Crew>('admin', 'admin', 'admin', 'auditor');
    await fuzz('POST /v1/audit/purge', 40, fc.record({ who, payload: bodies(purgeBody) }), async ({ who, payload }) => {
      await hit({ method: 'POST', path: '/v1/audit/purge', token: c[who], payload });
    });
  });

  it('GET list and query endpoints with random query strings', async () => {
    const c = crews.find((x) => x.tenant === 'fz-prop') ?? (await crew('fz-prop'));
    const done = await executedCall(c);
    const held = await pendingCall(c);
    // Real cursors, so the fuzz also sends ones this server issued.
    const cursors: string[] = [];
    for (const path of ['/v1/conversations?limit=1', '/v1/audit/events?limit=1', '/v1/tools?limit=1']) {
      const a = await must({ method: 'GET', path, token: c.admin }, 200);
      if (typeof a?.nextCursor === 'string') cursors.push(a.nextCursor);
    }
    const routes: [string, keyof Crew | undefined, Call['kind']][] = [
      ['/v1/conversations', 'agent', 'json'],
      ['/v1/conversations', 'approver', 'json'],
      ['/v1/conversations', 'auditor', 'json'],
      ['/v1/approvals', 'approver', 'json'],
      ['/v1/approvals', 'admin', 'json'],
      ['/v1/tools', 'agent', 'json'],
      ['/v1/tools', 'auditor', 'json'],
      ['/v1/audit/events', 'auditor', 'json'],
      ['/v1/audit/events', 'admin', 'json'],
      ['/v1/audit/export', 'auditor', 'export'],
      ['/v1/audit/metrics', 'auditor', 'json'],
      ['/v1/audit/gaps', 'auditor', 'json'],
      ['/v1/audit/verify', 'auditor', 'json'],
      ['/v1/audit/checkpoint', 'auditor', 'checkpoint'],
      [`/v1/tool-calls/${done}`, 'approver', 'json'],
      [`/v1/tool-calls/${held}`, 'agent', 'json'],
      ['/v1/policy', 'agent', 'json'],
      ['/v1/status', 'admin', 'json'],
      ['/metrics', undefined, 'metrics'],
    ];
    const KEYS = [
      'limit',
      'cursor',
      'status',
      'wait',
      'type',
      'from',
      'to',
      'format',
      'conversationId',
      'toolCallId',
      'toolName',
      'actor',
      'limit[]',
      'limit[0]',
      'cursor[x]',
      'status[]',
      'type[]',
      'from[a]',
      'wait[]',
      '__proto__',
      'constructor',
      '',
      'x',
    ];
    const VALUES = [
      '',
      '0',
      '1',
      '2',
      '60',
      '61',
      '100',
      '1000',
      '1001',
      '-1',
      '1.5',
      '1e1',
      ' 5',
      '0x10',
      '00000000001',
      '99999999999999999999999',
      'NaN',
      'Infinity',
      'pending',
      'approved',
      'rejected',
      'expired',
      'cancelled',
      'executed',
      'completed',
      'active',
      'blocked',
      'halted',
      'ndjson',
      'csv',
      'json',
      'ToolCallProposed',
      'ToolCallProposed,Halted',
      ',,,',
      'Nope',
      '2000-01-01',
      '2000-01-01T00:00:00Z',
      '0000-01-01',
      '9999-12-31',
      '275760-09-13',
      '2000-13-45',
      '2030-01-01',
      '2000-01-01T00:00:00+99:99',
      'now',
      'true',
      'fz-agent',
      'tc_missing',
    ];
    const cursor = fc.oneof(
      fc.constantFrom(...(cursors.length ? cursors : ['x'])),
      fc
        .tuple(
          fc.oneof(
            fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
            nastyString,
          ),
          nastyString,
        )
        .map((k) => b64url(JSON.stringify(k))),
      fc
        .oneof(fc.nat().map(String), fc.bigInt({ min: 0n, max: 10n ** 30n }).map(String), nastyString)
        .map((n) => b64url(`seq:${n}`)),
      fc.jsonValue({ maxDepth: 2 }).map((v) => b64url(JSON.stringify(v))),
    );
    const value = fc.oneof(
      { weight: 5, arbitrary: fc.constantFrom(...VALUES) },
      { weight: 3, arbitrary: cursor },
      { weight: 3, arbitrary: nastyString },
      { weight: 1, arbitrary: fc.nat().map(String) },
      { weight: 1, arbitrary: longString([255, 256, 257, 1000]) },
    );
    const key = fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...KEYS) }, { weight: 1, arbitrary: nastyString });
    const query = fc.record({ pairs: fc.array(fc.tuple(key, value), { maxLength: 5 }), encoded: fc.boolean() });
    const accept = fc.constantFrom<string | undefined>(
      undefined,
      'application/json',
      'application/jose',
      '*/*',
      'text/csv',
      'application/json;q=0',
      'nonsense/x, */*;q=0.1',
      '',
    );
    await fuzz(
      'GET lists and queries',
      100,
      fc.record({ route: fc.constantFrom(...routes), query, accept }),
      async ({ route: [path, who, kind], query, accept }) => {
        const pairs = query.pairs.map(([k, v]) => {
          // Never make the fuzz sleep: a pending call's wait must stay at 0 (any whole number from 0 to 60 is valid).
          const safe = path.includes(held) && k.startsWith('wait') && /^\d+$/.test(v) && Number(v) > 0 ? '0' : v;
          return query.encoded ? `${enc(k)}=${enc(safe)}` : `${k}=${safe}`.replace(/#/g, '%23');
        });
        // Node refuses a request head over 16 KiB (431, no body) before the service sees it: keep URLs well below.
        const url = () => new URL(server.url + path + (pairs.length ? `?${pairs.join('&')}` : '')).href;
        while (pairs.length > 1 && url().length > 8000) pairs.pop();
        const qs = pairs.length ? `?${pairs.join('&')}` : '';
        await hit({
          method: 'GET',
          path: path + qs,
          token: who && c[who],
          kind,
          headers: accept === undefined ? {} : { accept },
        });
      },
    );
  });

  it('random path ids on every route that takes one', async () => {
    const c = crews.find((x) => x.tenant === 'fz-prop') ?? (await crew('fz-prop'));
    const routes: [Call['method'], (id: string) => string, keyof Crew, unknown][] = [
      ['GET', (id) => `/v1/conversations/${id}`, 'agent', undefined],
      [
        'POST',
        (id) => `/v1/conversations/${id}/tool-calls`,
        'agent',
        { toolCalls: [{ toolName: 'get_time', arguments: {} }] },
      ],
      ['GET', (id) => `/v1/tool-calls/${id}?wait=0`, 'approver', undefined],
      ['POST', (id) => `/v1/tool-calls/${id}/decision`, 'approver', { decision: 'reject', reason: 'fuzz' }],
      ['POST', (id) => `/v1/tool-calls/${id}/execution`, 'agent', undefined],
      ['POST', (id) => `/v1/tool-calls/${id}/result`, 'agent', { outcome: 'failed', error: 'fuzz' }],
      ['PUT', (id) => `/v1/tools/${id}`, 'admin', { description: 'fuzz' }],
      ['GET', (id) => `/v1/tools/${id}`, 'agent', undefined],
    ];
    const id = fc.oneof(
      { weight: 2, arbitrary: fc.nat().map((i) => enc(knownIds.length ? knownIds[i % knownIds.length] : 'none')) },
      { weight: 4, arbitrary: pathSegment },
    );
    await fuzz(
      'random path ids',
      80,
      fc.record({ route: fc.constantFrom(...routes), id }),
      async ({ route: [method, path, who, body], id }) => {
        await hit({
          method,
          path: path(id),
          token: c[who],
          payload: body === undefined ? undefined : jsonPayload(body),
        });
      },
    );
  });

  it('leaves every fuzzed tenant with an intact audit chain, and the server ready', async () => {
    for (const c of crews) {
      const a = await hit({ method: 'GET', path: '/v1/audit/verify', token: c.auditor });
      expect({ tenant: c.tenant, ...a.json }).toMatchObject({ tenant: c.tenant, ok: true });
    }
    expect((await send({ method: 'GET', path: '/health/ready' })).status).toBe(200);
  });
});
