/**
 * One definition of the API's shapes: the SDK's types are generated from the server's /openapi.json by
 * scripts/gen-types.mjs (openapi-typescript) into src/generated/api.ts, which is committed. This regenerates it
 * from a fresh server and fails while the committed file differs, byte for byte: a view or Swagger class changed
 * without regenerating. src/types.ts only names the generated schemas, so the SDK cannot drift on its own.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { startTestServer, type TestServer } from './support.js';

const ROOT = join(__dirname, '..', '..', '..');
const SCRIPT = join(ROOT, 'packages', 'sdk', 'scripts', 'gen-types.mjs');
const COMMITTED = join(ROOT, 'packages', 'sdk', 'src', 'generated', 'api.ts');

let server: TestServer;
let work: string;
let doc: any;
let stale = false;

/** The generator's output for `document`, as the script writes it (openapi-typescript is ESM: its own process). */
async function generate(document: unknown, name: string): Promise<string> {
  const source = join(work, `${name}.json`);
  const out = join(work, `${name}.ts`);
  writeFileSync(source, JSON.stringify(document));
  await promisify(execFile)(process.execPath, [SCRIPT, source, '--out', out], { cwd: ROOT });
  return readFileSync(out, 'utf8');
}

beforeAll(async () => {
  server = await startTestServer();
  doc = await (await fetch(`${server.url}/openapi.json`)).json();
  work = mkdtempSync(join(tmpdir(), 'tollgate-sdk-types-'));
});

afterAll(async () => {
  await server?.stop();
  // A stale file's regenerated text stays, for the failure message's `cp`.
  if (work && !stale) rmSync(work, { recursive: true, force: true });
});

describe("the SDK's generated API types (src/generated/api.ts)", () => {
  it("are what the server's OpenAPI document generates, byte for byte", async () => {
    const fresh = await generate(doc, 'api');
    const committed = readFileSync(COMMITTED, 'utf8');
    if (committed === fresh) return;
    stale = true;
    const a = committed.split('\n');
    const b = fresh.split('\n');
    let line = 0;
    while (line < Math.max(a.length, b.length) && a[line] === b[line]) line += 1;
    throw new Error(
      [
        `${relative(ROOT, COMMITTED)} differs from what the server's /openapi.json generates, from line ${line + 1}:`,
        `  committed: ${a[line] ?? '(end of file)'}`,
        `  generated: ${b[line] ?? '(end of file)'}`,
        'A view or Swagger class changed without regenerating. Regenerate against a server built from this tree',
        `(npm run gen:types -- http://127.0.0.1:<port>), or take this run's output:`,
        `  cp ${join(work, 'api.ts')} ${relative(ROOT, COMMITTED)}`,
      ].join('\n'),
    );
  });

  it('would not match a document that changed: a member added to ToolCall, an enum widened', async () => {
    const changed = structuredClone(doc);
    changed.components.schemas.ToolCall.properties.priority = { type: 'integer' };
    changed.components.schemas.Channel.enum.push('email');
    const text = await generate(changed, 'changed');
    expect(text).not.toBe(readFileSync(COMMITTED, 'utf8'));
    expect(text).toMatch(/priority\?: number;/);
    expect(text).toMatch(/\| "email"|\| 'email'/);
  });
});
