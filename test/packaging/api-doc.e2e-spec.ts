import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { PolicyDocument } from '../../src/domain/policy/policy-document';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

/**
 * docs/API.md is what users build against, so its examples run: the policy document is accepted as written, the
 * receipt check accepts a real receipt and refuses an altered call, and its table of error codes names every code
 * the service can answer with.
 */
const ROOT = join(__dirname, '..', '..');
const API = readFileSync(join(ROOT, 'docs', 'API.md'), 'utf8');

/** The fenced blocks of one language, in order. */
function blocks(lang: string): string[] {
  return [...API.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.ts$/.test(name) && !/\.spec\.ts$/.test(name) ? [path] : [];
  });
}

describe('docs/API.md', () => {
  let server: TestServer;
  let http: ReturnType<typeof client>;
  let work: string;

  beforeAll(async () => {
    server = await startTestServer();
    http = client(server.url);
    work = mkdtempSync(join(tmpdir(), 'tollgate-api-doc-'));
    symlinkSync(join(ROOT, 'node_modules'), join(work, 'node_modules'), 'dir'); // the snippet imports jose and canonicalize
  });

  afterAll(async () => {
    await server?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('shows a policy document the server accepts as written', async () => {
    const [yaml] = blocks('yaml');
    expect(yaml).toMatch(/^# yaml-language-server: \$schema=http:\/\/localhost:8080\/schemas\/policy\.json\n/);
    const parsed = PolicyDocument.parse(parseYaml(yaml));
    expect(parsed.rules.map((r) => r.match)).toEqual([
      'get_*',
      'shell(cmd=rm *)',
      'delete_source',
      'wire_money',
      'pay_vendor',
      '*',
    ]);
    const admin = await server.token('ann', ['admin']);
    const put = await http.call('PUT', '/v1/policy', {
      token: admin,
      raw: yaml,
      headers: { 'content-type': 'application/yaml' },
    });
    expect(put.status).toBe(200);
    expect(put.body.defaults).toEqual({
      unknownTools: 'confirm',
      timeoutSeconds: 300,
      approvers: ['approver', 'admin'],
      trustAgentFlags: true,
      grants: 'tenant',
      selfApproval: true,
    });
  });

  it("has a receipt check that accepts the server's receipt for the edited arguments and refuses any other call or tenant", async () => {
    const snippet = blocks('js').find((b) => b.includes('checkReceipt'));
    expect(snippet).toBeDefined();
    writeFileSync(join(work, 'check-receipt.mjs'), snippet!);

    const admin = await server.token('ann', ['admin'], { name: 'Ann' });
    const agent = await server.token('support-bot', ['agent']);
    expect(
      (await http.put('/v1/policy', admin, { rules: [{ match: 'delete_source', level: 'confirm' }] })).status,
    ).toBe(200);
    expect((await http.post('/v1/conversations', agent, { id: 'conv-receipt', user: { id: 'ann' } })).status).toBe(201);
    const proposed = await http.post('/v1/conversations/conv-receipt/tool-calls', agent, {
      toolCalls: [{ toolName: 'delete_source', arguments: { id: 'src_2' } }],
    });
    const id = proposed.body.toolCalls[0].id;
    const edited = { id: 'src_2', dryRun: true, nested: { b: 1, a: [1, 'two'] } };
    expect(
      (await http.post(`/v1/tool-calls/${id}/decision`, admin, { decision: 'approve', arguments: edited })).status,
    ).toBe(200);
    const claim = await http.post(`/v1/tool-calls/${id}/execution`, agent);
    expect(claim.status).toBe(200);
    writeFileSync(join(work, 'claim.json'), JSON.stringify(claim.body));
    // Another tenant, whose admin lets everything through: its receipt must not pass this tenant's backend.
    const mallory = await server.token('mallory', ['admin'], { tenant: 'tenant-b' });
    const agentB = await server.token('bot-b', ['agent'], { tenant: 'tenant-b' });
    expect((await http.put('/v1/policy', mallory, { rules: [{ match: '*', level: 'automatic' }] })).status).toBe(200);
    expect((await http.post('/v1/conversations', agentB, { id: 'conv-b' })).status).toBe(201);
    const theirs = await http.post('/v1/conversations/conv-b/tool-calls', agentB, {
      toolCalls: [{ toolName: 'delete_source', arguments: edited }],
    });
    expect(theirs.status).toBe(201);
    const claimB = await http.post(`/v1/tool-calls/${theirs.body.toolCalls[0].id}/execution`, agentB);
    expect(claimB.status).toBe(200);
    writeFileSync(join(work, 'claim-b.json'), JSON.stringify(claimB.body));

    writeFileSync(
      join(work, 'run.mjs'),
      `import { readFileSync } from 'node:fs';
import { checkReceipt } from './check-receipt.mjs';
const { receipt, toolCall, arguments: args } = JSON.parse(readFileSync('claim.json', 'utf8'));
const outcome = (p) => p.then((claims) => 'accepted ' + claims.tcid + ' by ' + claims.approvedBy, (e) => 'refused: ' + e.message);
console.log(await outcome(checkReceipt(receipt, toolCall.toolName, args)));
console.log(await outcome(checkReceipt(receipt, toolCall.toolName, { ...args, dryRun: false })));
console.log(await outcome(checkReceipt(receipt, 'drop_database', args)));
const [h, , s] = receipt.split('.');
const forged = [h, Buffer.from(JSON.stringify({ tcid: 'x', conv: 'x', tool: 'x', args: 'x', approvedBy: 'x', exp: 9e9, jti: 'x' })).toString('base64url'), s].join('.');
console.log(await outcome(checkReceipt(forged, 'x', {})));
const b = JSON.parse(readFileSync('claim-b.json', 'utf8'));
console.log(await outcome(checkReceipt(b.receipt, b.toolCall.toolName, b.arguments)));
`,
    );
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['run.mjs'],
        { cwd: work, env: { ...process.env, TOLLGATE_URL: server.url }, timeout: 30_000 },
        (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stdout}\n${stderr}`)) : resolve(stdout)),
      ),
    );
    expect(claim.body.arguments).toEqual(edited);
    expect(out.trim().split('\n')).toEqual([
      `accepted ${id} by ann`,
      'refused: the receipt approves another call',
      'refused: the receipt approves another call',
      'refused: signature verification failed',
      'refused: the receipt approves another call',
    ]);
  });

  it('lists every error code the service answers with', () => {
    const table = new Set([...API.matchAll(/^\| \d{3} \| `([a-z_]+)` \|/gm)].map((m) => m[1]));
    const emitted = new Set<string>();
    for (const file of sourceFiles(join(ROOT, 'src'))) {
      const text = readFileSync(file, 'utf8');
      // DomainError codes (new DomainError('code', …) and subclasses' super('code', …)), problems built directly, and raw problem bodies.
      for (const m of text.matchAll(/(?:new DomainError\(|super\(|problem\(\d{3}, )\s*'([a-z_]+)'/g)) emitted.add(m[1]);
      for (const m of text.matchAll(/code: tooLarge \? '([a-z_]+)' : '([a-z_]+)'/g)) emitted.add(m[1]).add(m[2]);
    }
    expect(emitted.size).toBeGreaterThan(15);
    expect([...emitted].filter((c) => !table.has(c)).sort()).toEqual([]);
  });
});
