import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { client } from '../support/http';
import { freePort } from '../support/process';
import { cliEnv, runCli } from '../support/pty';
import { startTestServer, TestServer } from '../support/server';

/** The scripting commands: `--json` output and exit codes (0 ok, 1 refused, 2 usage, 3 unreachable/5xx). */
describe('tollgate client commands (scripts)', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let scratch: string;
  let ann: string;
  let bea: string;
  let agent: string;
  let audrey: string;
  const as = (token: string) => cliEnv({ url: server.url, token });

  beforeAll(async () => {
    server = await startTestServer();
    api = client(server.url);
    scratch = mkdtempSync(join(tmpdir(), 'tollgate-cli-cmds-'));
    ann = await server.token('ann', ['admin'], { name: 'Ann' });
    bea = await server.token('bea', ['approver'], { name: 'Bea' });
    agent = await server.token('bot', ['agent']);
    audrey = await server.token('audrey', ['auditor']);
  });
  afterAll(async () => {
    rmSync(scratch, { recursive: true, force: true });
    await server.stop();
  });

  let n = 0;
  async function propose(toolName: string, args: Record<string, unknown> = {}): Promise<string> {
    const conv = `cmd-${++n}`;
    expect((await api.post('/v1/conversations', agent, { id: conv })).status).toBe(201);
    const r = await api.post(`/v1/conversations/${conv}/tool-calls`, agent, {
      toolCalls: [{ toolName, arguments: args }],
    });
    expect(r.body.toolCalls[0].status).toBe('pending');
    return r.body.toolCalls[0].id;
  }

  it('approve <id> --json decides via cli and prints the call; deciding it again exits 1 with already_decided', async () => {
    const id = await propose('send_email', { to: 'a@example.com' });
    const ok = await runCli(['approve', id, '--reason', 'looks fine', '--json'], as(bea));
    expect(ok.code).toBe(0);
    const call = JSON.parse(ok.stdout);
    expect(call).toMatchObject({
      id,
      status: 'approved',
      decision: { outcome: 'approved', reason: 'looks fine', by: { id: 'bea', via: 'cli' } },
    });

    const again = await runCli(['reject', id, '--json'], as(ann));
    expect(again.code).toBe(1);
    expect(again.stderr.trim()).toMatch(/^already_decided: /);
    expect(JSON.parse(again.stdout)).toMatchObject({
      status: 409,
      code: 'already_decided',
      decision: { outcome: 'approved' },
    });

    const plain = await runCli(['reject', id], as(ann));
    expect(plain.code).toBe(1);
    expect(plain.stdout).toBe('');
  });

  it('reject <id> --reason, and approve with edited arguments, print one line each without --json', async () => {
    const r1 = await propose('wire_money', { amount: 5 });
    const rejected = await runCli(['reject', r1, '--reason', 'ask finance'], as(bea));
    expect(rejected.code).toBe(0);
    expect(rejected.stdout.trim()).toBe(`${r1} wire_money: rejected by Bea via cli (ask finance)`);

    const r2 = await propose('wire_money', { amount: 500 });
    const edited = await runCli(['approve', r2, '--arguments', '{"amount": 50}'], as(bea));
    expect(edited.code).toBe(0);
    expect(edited.stdout).toMatch(/approved by Bea via cli with edited arguments/);
    expect((await api.get(`/v1/tool-calls/${r2}`, ann)).body.decision.editedArguments).toEqual({ amount: 50 });
  });

  it('pending --json lists what the caller may decide', async () => {
    const id = await propose('needs_a_person');
    const r = await runCli(['pending', '--json'], as(bea));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).items.map((i: { id: string }) => i.id)).toContain(id);
  });

  it('refusals exit 1 with `code: detail` on stderr: an unknown call, an agent deciding, an auditor applying a policy', async () => {
    const missing = await runCli(['approve', 'tc_nope'], as(ann));
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toMatch(/^not_found: /);

    const id = await propose('needs_a_person');
    const byAgent = await runCli(['approve', id], as(agent));
    expect(byAgent.code).toBe(1);
    expect(byAgent.stderr).toMatch(/^forbidden: /);

    const file = join(scratch, 'p.yaml');
    writeFileSync(file, 'rules: []\n');
    const byAuditor = await runCli(['policy', 'apply', file], as(audrey));
    expect(byAuditor.code).toBe(1);
    expect(byAuditor.stderr).toMatch(/^forbidden: /);
  });

  it('usage and configuration errors exit 2; an unreachable server exits 3', async () => {
    expect((await runCli(['approve'], as(ann))).code).toBe(2); // missing <id>
    expect((await runCli(['frobnicate'], as(ann))).code).toBe(2);
    expect((await runCli(['halt'], as(ann))).code).toBe(2); // --reason is required
    const noToken = await runCli(['tools'], cliEnv({ url: server.url }));
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toMatch(/TOLLGATE_TOKEN/);
    const badUrl = await runCli(['tools'], cliEnv({ url: 'ftp://x', token: ann }));
    expect(badUrl.code).toBe(2);

    const port = await freePort(); // nothing listens there
    const down = await runCli(['approve', 'tc_x', '--json'], cliEnv({ url: `http://127.0.0.1:${port}`, token: ann }));
    expect(down.code).toBe(3);
    expect(down.stderr).toMatch(/cannot reach Tollgate at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
    // --url and --token win over the environment
    const flags = await runCli(
      ['tools', '--json', '--url', server.url, '--token', ann],
      cliEnv({ url: `http://127.0.0.1:${port}`, token: 'garbage' }),
    );
    expect(flags.code).toBe(0);
    expect(await runCli(['--help'], as(ann))).toMatchObject({ code: 0 });
  });

  it('a server failing (5xx) exits 3 with its problem code', async () => {
    const failing = createServer((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/problem+json' });
      res.end(
        JSON.stringify({
          type: 'urn:tollgate:problem:unavailable',
          title: 'Service Unavailable',
          status: 503,
          detail: 'The database is unreachable',
          code: 'unavailable',
        }),
      );
    });
    await new Promise<void>((r) => failing.listen(0, '127.0.0.1', () => r()));
    try {
      const r = await runCli(
        ['tools'],
        cliEnv({ url: `http://127.0.0.1:${(failing.address() as AddressInfo).port}`, token: ann }),
      );
      expect(r.code).toBe(3);
      expect(r.stderr.trim()).toBe('unavailable: The database is unreachable');
    } finally {
      failing.close();
    }
  });

  it('policy apply FILE (YAML or JSON) makes a new version; policy get prints YAML ready to apply again, or --json', async () => {
    const yamlFile = join(scratch, 'policy.yaml');
    writeFileSync(
      yamlFile,
      'defaults:\n  timeoutSeconds: 120\nrules:\n  - match: "get_*"\n    level: automatic\n  - match: "shell(cmd=rm *)"\n    level: deny\n',
    );
    const applied = await runCli(['policy', 'apply', yamlFile, '--json'], as(ann));
    expect(applied.code).toBe(0);
    const v1 = JSON.parse(applied.stdout);
    expect(v1.rules).toHaveLength(2);

    const got = await runCli(['policy', 'get'], as(bea));
    expect(got.code).toBe(0);
    expect(got.stdout).toMatch(new RegExp(`^# policy version ${v1.version}, .* by ann\\n`));
    expect(got.stdout).toContain('match: shell(cmd=rm *)');
    const roundTrip = join(scratch, 'again.yaml');
    writeFileSync(roundTrip, got.stdout);
    const again = await runCli(['policy', 'apply', roundTrip], as(ann));
    expect(again.code).toBe(0);
    expect(again.stdout.trim()).toBe(`Policy version ${v1.version + 1} applied (2 rules)`);

    const jsonFile = join(scratch, 'policy.json');
    writeFileSync(jsonFile, JSON.stringify({ rules: [{ match: '*', level: 'confirm' }] }));
    expect((await runCli(['policy', 'apply', jsonFile], as(ann))).code).toBe(0);
    const asJson = JSON.parse((await runCli(['policy', 'get', '--json'], as(ann))).stdout);
    expect(asJson).toMatchObject({ version: v1.version + 2, rules: [{ match: '*', level: 'confirm' }] });

    const bad = join(scratch, 'bad.yaml');
    writeFileSync(bad, 'rules:\n  - match: "x"\n    level: sometimes\n');
    const refused = await runCli(['policy', 'apply', bad], as(ann));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^validation_failed: /);
    expect((await runCli(['policy', 'apply', join(scratch, 'missing.yaml')], as(ann))).code).toBe(2);
  });

  it('tools lists the registry as a table or --json', async () => {
    expect(
      (await api.put('/v1/tools/delete_source', ann, { description: 'Delete a knowledge source', destructive: true }))
        .status,
    ).toBe(201);
    const table = await runCli(['tools'], as(bea));
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^NAME\s+FLAGS/);
    expect(table.stdout).toMatch(/delete_source\s+destructive\s+ann\s+Delete a knowledge source/);
    const json = JSON.parse((await runCli(['tools', '--json'], as(bea))).stdout);
    expect(json.items).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'delete_source', destructive: true })]),
    );
  });

  it('audit filters by type, tool and actor, as a table or --json, and refuses people who are not auditors', async () => {
    const id = await propose('audited_tool');
    expect((await runCli(['approve', id], as(bea))).code).toBe(0);
    const json = await runCli(
      ['audit', '--type', 'ToolCallApproved', '--tool', 'audited_tool', '--actor', 'bea', '--since', '1h', '--json'],
      as(audrey),
    );
    expect(json.code).toBe(0);
    const { events, nextCursor } = JSON.parse(json.stdout);
    expect(nextCursor).toBeNull();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'ToolCallApproved',
      toolCallId: id,
      actor: { id: 'bea' },
      data: { via: 'cli' },
    });

    const table = await runCli(['audit', '--conversation', `cmd-${n}`], as(audrey));
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^SEQ\s+AT\s+TYPE\s+TOOL\s+CALL\s+ACTOR\s+DETAIL$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/)[3])).toEqual([
      'ConversationStarted',
      'ToolCallProposed',
      'ApprovalRequested',
      'ToolCallApproved',
    ]);
    expect(lines[4]).toContain('Bea via cli');

    const limited = JSON.parse((await runCli(['audit', '--limit', '2', '--json'], as(audrey))).stdout);
    expect(limited.events).toHaveLength(2);
    expect(limited.nextCursor).toEqual(expect.any(String));
    const next = JSON.parse(
      (await runCli(['audit', '--limit', '1', '--cursor', limited.nextCursor, '--json'], as(audrey))).stdout,
    );
    expect(next.events[0].seq).toBe(limited.events[1].seq + 1);

    expect((await runCli(['audit', '--since', 'yesterday-ish'], as(audrey))).code).toBe(2);
    const refused = await runCli(['audit'], as(bea));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^forbidden: /);
  });

  it('halt and resume (tenant, agent or conversation) with --json; a halt cancels what is pending', async () => {
    const id = await propose('needs_a_person');
    const halted = await runCli(['halt', '--agent', 'bot', '--reason', 'incident drill', '--json'], as(ann));
    expect(halted.code).toBe(0);
    expect(JSON.parse(halted.stdout)).toMatchObject({
      scope: 'agent',
      id: 'bot',
      halted: true,
      changed: true,
      cancelledToolCallIds: expect.arrayContaining([id]),
    });
    const cancelled = (await api.get(`/v1/tool-calls/${id}`, ann)).body;
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.cancellation.by).toMatchObject({ id: 'ann', via: 'cli' }); // recorded as the CLI's

    const twice = await runCli(['halt', '--agent', 'bot', '--reason', 'again'], as(ann));
    expect(twice).toMatchObject({ code: 0, stdout: 'agent bot was already halted\n' });
    expect((await runCli(['halt', '--agent', 'bot', '--conversation', 'c', '--reason', 'x'], as(ann))).code).toBe(2);
    expect((await runCli(['halt', '--reason', 'x'], as(bea))).code).toBe(1); // admins only

    const resumed = await runCli(['resume', '--agent', 'bot'], as(ann));
    expect(resumed).toMatchObject({ code: 0, stdout: 'Resumed agent bot\n' });
    const tenant = await runCli(['halt', '--reason', 'whole tenant'], as(ann));
    expect(tenant.stdout).toMatch(/^Halted the tenant; \d+ call\(s\) cancelled/);
    expect(JSON.parse((await runCli(['resume', '--json'], as(ann))).stdout)).toMatchObject({
      scope: 'tenant',
      changed: true,
    });
  });
});
