/**
 * The three RFC 8785 canonicalizers agree on the digest a receipt's `args` claim holds: the server's (the
 * `canonicalize` package, JoseReceiptSigner.digest), the TypeScript SDK's (jcs.ts) and the Python client's (jcs.py,
 * run once for a whole batch in the test venv). Inputs are JSON texts as they travel: big integer literals
 * (past 2^53 and 10^21), doubles, unicode and lone surrogates (escaped, as JSON.stringify writes them).
 *
 * What each side does: the server reads numbers as doubles and refuses lone surrogates at input (400); the SDK
 * refuses a lone surrogate (TypeError); the Python client refuses a lone surrogate and an integer the server
 * would read as another number (ValueError). Otherwise all three digests are equal. Then a sample goes through
 * a real server: propose, claim, and the receipt's `args` is what both clients compute from the claim's answer.
 */
import fc from 'fast-check';
import { decodeJwt } from 'jose';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { argumentsDigest } from '@tollgate/sdk';
import { loadConfig } from '../../src/infrastructure/config/config';
import { JoseReceiptSigner } from '../../src/infrastructure/receipts/receipt-signer';
import { PYTHON_CLIENT, runPython, testPython } from '../support/python';
import { startTestServer, type TestServer } from '../support/server';

/** The server's digest of arguments, as the claim signs it (a pure method: no key or database is touched). */
const server = new JoseReceiptSigner(undefined as never, loadConfig({}));

type Node = { num: string } | string | boolean | null | Node[] | { obj: Array<[string, Node]> };

const char16 = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)); // lone surrogates included
const text = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
  { weight: 1, arbitrary: fc.string({ unit: char16, maxLength: 4 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('\ud800', 'x\udfff', '\ud83d\ude00', '\u2028', '\u0000', '"\\', '\u00e9', '\u007f'),
  },
);
const numberLiteral = fc
  .oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => JSON.stringify(x)),
    fc.bigInt({ min: -(10n ** 25n), max: 10n ** 25n }).map(String),
    fc.bigInt({ min: 2n ** 53n - 4n, max: 2n ** 53n + 4n }).map(String),
    fc.integer().map(String),
    fc.constantFrom(
      '1152921504606846976',
      '1152921504606847000',
      '1000000000000000000000',
      '1000000000000000000001',
      '-1000000000000000000000',
      '1e21',
      '1E+21',
      '1.0',
      '-0',
      '0.1',
      '5e-324',
      '1.7976931348623157e308',
    ),
  )
  .map((num) => ({ num }));
const { node } = fc.letrec<{ node: Node }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    numberLiteral,
    text,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('node'), { maxLength: 4 }),
    fc.uniqueArray(fc.tuple(text, tie('node')), { maxLength: 4, selector: ([k]) => k }).map((obj) => ({ obj })),
  ),
}));
/** Arguments as JSON text: an object, as the API takes them. */
const argumentsText = fc
  .uniqueArray(fc.tuple(text, node), { minLength: 1, maxLength: 4, selector: ([k]) => k })
  .map((obj) => write({ obj }));

function write(n: Node): string {
  if (n === null || typeof n === 'boolean' || typeof n === 'string') return JSON.stringify(n);
  if (Array.isArray(n)) return `[${n.map(write).join(',')}]`;
  if ('num' in n) return n.num;
  return `{${n.obj.map(([k, v]) => `${JSON.stringify(k)}:${write(v)}`).join(',')}}`;
}

const LONE_SURROGATE = /\p{Cs}/u;

function hasLoneSurrogate(v: unknown): boolean {
  if (typeof v === 'string') return LONE_SURROGATE.test(v);
  if (Array.isArray(v)) return v.some(hasLoneSurrogate);
  return (
    v !== null &&
    typeof v === 'object' &&
    Object.entries(v).some(([k, x]) => LONE_SURROGATE.test(k) || hasLoneSurrogate(x))
  );
}

/** The exact value of the decimal text the server writes for the double nearest the integer literal `digits`. */
function readAs(digits: string): bigint | undefined {
  const written = String(Number(digits));
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e\+(\d+))?$/.exec(written);
  if (!m) return undefined; // Infinity
  const [, sign, whole, fraction = '', exponent = '0'] = m;
  return BigInt(`${sign}${whole}${fraction}`) * 10n ** BigInt(Number(exponent) - fraction.length);
}

/** An integer literal the server would read as another number (2^53 + 1 as 2^53, 10^21 + 1 as 10^21). */
function hasMisreadInteger(argsText: string): boolean {
  const literals = argsText.replace(/"(?:[^"\\]|\\.)*"/g, '""').match(/-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g) ?? [];
  return literals.some((l) => /^-?\d+$/.test(l) && readAs(l) !== BigInt(l));
}

async function tsDigest(value: unknown): Promise<string> {
  return argumentsDigest(value).catch((e: unknown) => `refused: ${(e as Error).name}`);
}

const PY_BATCH = `
import json, sys
from tollgate.jcs import arguments_digest
out = []
for text in json.load(open(sys.argv[1], encoding="utf-8")):
    try:
        out.append(arguments_digest(json.loads(text)))
    except ValueError as e:
        out.append("refused: " + type(e).__name__)
json.dump(out, open(sys.argv[2], "w"))
`;

const python = testPython();
const withPython = python ? describe : describe.skip;
if (!python)
  console.warn('canonical-json.e2e-spec: no python3 on this machine, so the Python digests were not compared');

withPython('the server, the TypeScript SDK and the Python client digest arguments alike', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-jcs-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The Python client's digests of JSON texts (from this tree's sources), or `refused: ValueError`. */
  async function pythonDigests(texts: string[]): Promise<string[]> {
    const input = join(dir, `in-${texts.length}-${Date.now()}.json`);
    const output = `${input}.out`;
    writeFileSync(input, JSON.stringify(texts));
    const { code, output: log } = await runPython(
      python!,
      ['-c', PY_BATCH, input, output],
      { PYTHONPATH: join(PYTHON_CLIENT, 'src') },
      120_000,
    );
    if (code !== 0) throw new Error(`the Python batch failed (exit ${code}):\n${log}`);
    return JSON.parse(readFileSync(output, 'utf8')) as string[];
  }

  it('gives one digest for any JSON text, or each side refuses what the server would not keep as written', async () => {
    const texts = fc.sample(argumentsText, { numRuns: 1500, seed: Number(process.env.JCS_SEED ?? 8785) });
    const py = await pythonDigests(texts);
    for (const [i, t] of texts.entries()) {
      const value: unknown = JSON.parse(t);
      const ts = await tsDigest(value);
      const context = `arguments ${JSON.stringify(t)}`;
      if (hasLoneSurrogate(value)) {
        expect({ context, ts, py: py[i] }).toEqual({ context, ts: 'refused: TypeError', py: 'refused: ValueError' });
      } else {
        const expected = server.digest(value);
        expect({ context, ts }).toEqual({ context, ts: expected });
        expect({ context, py: py[i] }).toEqual({
          context,
          py: hasMisreadInteger(t) ? 'refused: ValueError' : expected,
        });
      }
    }
    // The cases the attacker named, spelled out: 10^21 and 10^21 + 1 never share a digest; 2^53..10^21 agree.
    const named = [
      '{"n":1000000000000000000000}',
      '{"n":1000000000000000000001}',
      '{"n":1152921504606847000}',
      '{"n":9007199254740993}',
      '{"s":"\\ud800"}',
    ];
    expect(await pythonDigests(named)).toEqual([
      server.digest({ n: 1e21 }),
      'refused: ValueError',
      server.digest({ n: 2 ** 60 }),
      'refused: ValueError',
      'refused: ValueError',
    ]);
  }, 120_000);

  describe('through a real server', () => {
    let tollgate: TestServer;
    let agent: string;
    const call = (path: string, token: string, body?: unknown) =>
      fetch(`${tollgate.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });

    beforeAll(async () => {
      tollgate = await startTestServer();
      agent = await tollgate.token('jcs-bot', ['agent']);
      const admin = await tollgate.token('ann', ['admin']);
      const policy = await fetch(`${tollgate.url}/v1/policy`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({ rules: [{ match: '*', level: 'automatic' }] }),
      });
      expect(policy.status).toBe(200);
      expect((await call('/v1/conversations', agent, { id: 'jcs' })).status).toBe(201);
    }, 60_000);

    afterAll(async () => {
      await tollgate?.stop();
    });

    it('refuses a lone surrogate at input, as a problem', async () => {
      for (const args of ['{"s":"\\ud800"}', '{"\\udc00":1}']) {
        const res = await call(
          '/v1/conversations/jcs/tool-calls',
          agent,
          `{"toolCalls":[{"toolName":"get_x","arguments":${args}}]}`,
        );
        expect({ args, status: res.status, code: ((await res.json()) as { code: string }).code }).toEqual({
          args,
          status: 400,
          code: 'validation_failed',
        });
      }
    });

    it("signs in the receipt the digest both clients compute from the claim's arguments", async () => {
      // The server refuses lone surrogates (above) and NUL characters (PostgreSQL cannot store them) at input.
      const sample = fc.sample(
        argumentsText.filter((t) => !hasLoneSurrogate(JSON.parse(t)) && !t.includes('\\u0000')),
        { numRuns: 128, seed: 21 },
      );
      const answers: string[] = [];
      const receipts: string[] = [];
      for (let i = 0; i < sample.length; i += 64) {
        const step = sample.slice(i, i + 64).map((t, j) => `{"id":"c${i + j}","toolName":"get_x","arguments":${t}}`);
        const proposed = await call('/v1/conversations/jcs/tool-calls', agent, `{"toolCalls":[${step.join(',')}]}`);
        expect({ status: proposed.status, body: proposed.status === 201 ? undefined : await proposed.text() }).toEqual({
          status: 201,
          body: undefined,
        });
        for (const tc of ((await proposed.json()) as { toolCalls: Array<{ id: string }> }).toolCalls) {
          const claimed = (await (await call(`/v1/tool-calls/${tc.id}/execution`, agent)).json()) as {
            arguments: unknown;
            receipt: string;
          };
          answers.push(JSON.stringify(claimed.arguments)); // the claim's arguments, as the server wrote them
          receipts.push(decodeJwt(claimed.receipt).args as string);
        }
      }
      const py = await pythonDigests(answers);
      for (const [i, answer] of answers.entries()) {
        const context = `sent ${sample[i]}, answered ${answer}`;
        expect({ context, ts: await tsDigest(JSON.parse(answer)), py: py[i] }).toEqual({
          context,
          ts: receipts[i],
          py: receipts[i],
        });
        expect({ context, server: server.digest(JSON.parse(sample[i])) }).toEqual({ context, server: receipts[i] });
      }
    }, 120_000);
  });
});
