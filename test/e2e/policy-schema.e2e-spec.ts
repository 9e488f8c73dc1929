import Ajv2020 from 'ajv/dist/2020';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { runInNewContext } from 'node:vm';
import { parse as parseYaml } from 'yaml';
import { POLICY_JSON_SCHEMA } from '../../src/adapters/api/policy-schema';
import { PolicyDocument } from '../../src/domain/policy/policy-document';
import { ValidationError } from '../../src/domain/shared/domain-error';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

/**
 * GET /schemas/policy.json: what editors validate a policy.yaml with. It must accept every policy the project
 * shows its users and puts in its own tests, and agree with the server's parser on each of them.
 */
const ROOT = join(__dirname, '..', '..');
const validate = new Ajv2020({ allErrors: true }).compile(POLICY_JSON_SCHEMA);

/** The server's parser accepts it (src/adapters/api/policy-schema.spec.ts compares the two fault by fault). */
function parses(doc: unknown): boolean {
  try {
    return !!PolicyDocument.parse(doc);
  } catch (e) {
    if (e instanceof ValidationError) return false;
    throw e;
  }
}

/** The policies the README and docs/ show: YAML blocks holding rules, and the bodies curl sends to /v1/policy. */
function documentedPolicies(): Array<{ where: string; yaml: string }> {
  const out: Array<{ where: string; yaml: string }> = [];
  const files = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => join('docs', f)),
  ];
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const m of text.matchAll(/```ya?ml\n([\s\S]*?)```/g))
      if (/^rules:/m.test(m[1])) out.push({ where: file, yaml: m[1] });
    for (const m of text.matchAll(/\/v1\/policy[^\n]*--data-binary '([^']*)'/g))
      out.push({ where: `${file} (curl)`, yaml: m[1] });
  }
  return out;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : /\.ts$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** The object or array literal starting at `i` (strings skipped), or null when something else starts there. */
function literalAt(src: string, i: number): string | null {
  let depth = 0;
  let quote: string | null = null;
  for (let j = i; j < src.length; j++) {
    const c = src[j];
    if (quote) {
      if (c === '\\') j++;
      else if (c === quote) quote = null;
    } else if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      if (--depth === 0) return src.slice(i, j + 1);
    } else if (depth === 0 && !/\s/.test(c)) return null;
  }
  return null;
}

/**
 * Every `put('/v1/policy', token, { … })` in the tests whose body is a plain literal (one naming variables cannot
 * be read without running its test, and is left out).
 */
function testSuitePolicies(): Array<{ where: string; doc: unknown }> {
  const out: Array<{ where: string; doc: unknown }> = [];
  for (const file of [...sourceFiles(join(ROOT, 'test')), ...sourceFiles(join(ROOT, 'src'))]) {
    const src = readFileSync(file, 'utf8');
    for (const m of src.matchAll(/put\(\s*'\/v1\/policy'\s*,\s*[\w.[\]]+\s*,\s*/g)) {
      const literal = literalAt(src, m.index! + m[0].length);
      if (!literal) continue;
      try {
        out.push({
          where: `${relative(ROOT, file)}:${src.slice(0, m.index).split('\n').length}`,
          doc: runInNewContext(`(${literal})`, {}, { timeout: 1000 }),
        });
      } catch {
        // names a variable: not a literal
      }
    }
  }
  return out;
}

describe('GET /schemas/policy.json', () => {
  let server: TestServer;
  let http: ReturnType<typeof client>;

  beforeAll(async () => {
    server = await startTestServer();
    http = client(server.url);
  });
  afterAll(() => server?.stop());

  it('serves the JSON Schema without a token, as application/schema+json', async () => {
    const res = await fetch(`${server.url}/schemas/policy.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/schema\+json/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    const body = await res.json();
    expect(body).toEqual(POLICY_JSON_SCHEMA);
    expect(body.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(new Ajv2020().validateSchema(body)).toBe(true);
  });

  it('accepts every policy the README and docs show, as the server does', async () => {
    const shown = documentedPolicies();
    expect(shown.map((s) => s.where)).toEqual(expect.arrayContaining(['docs/API.md']));
    const admin = await server.token('ann', ['admin']);
    for (const { where, yaml } of shown) {
      const doc = parseYaml(yaml);
      expect({ where, valid: validate(doc), errors: validate.errors ?? null }).toEqual({
        where,
        valid: true,
        errors: null,
      });
      const put = await http.call('PUT', '/v1/policy', {
        token: admin,
        raw: yaml,
        headers: { 'content-type': 'application/yaml' },
      });
      expect({ where, status: put.status }).toEqual({ where, status: 200 });
    }
  });

  it("gives the parser's verdict on every policy literal the test suite puts", () => {
    const found = testSuitePolicies();
    expect(found.length).toBeGreaterThanOrEqual(20); // the scan still finds them
    expect(found.filter(({ doc }) => parses(doc)).length).toBeGreaterThanOrEqual(15);
    for (const { where, doc } of found)
      expect({ where, schemaAccepts: validate(doc) }).toEqual({ where, schemaAccepts: parses(doc) });
  });
});
