/**
 * `tollgate hook claude-code` as Claude Code runs it: the built CLI, started with the command of
 * examples/claude-code/settings.json, fed on stdin exactly what Claude Code sends a hook, against a real Tollgate.
 * stdout must be Claude Code's JSON and nothing else; the exit code is what Claude Code acts on.
 */
import { spawn } from 'node:child_process';
import { createServer, type Socket } from 'node:net';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { client } from '../support/http';
import { BIN, freePort } from '../support/process';
import { cliEnv, runCli, type CliRun } from '../support/pty';
import { startTestServer, type TestServer } from '../support/server';
import { eventually } from '../support/wait';

const EXAMPLE = join(__dirname, '..', '..', 'examples', 'claude-code', 'settings.json');
type Entry = { matcher: string; hooks: Array<{ type: string; command: string; timeout: number }> };
const example = JSON.parse(readFileSync(EXAMPLE, 'utf8')) as { hooks: Record<string, Entry[]> };

/** The example's command for an event, as argv after `tollgate` (the test runs the checkout's bin instead). */
function argsOf(event: string): string[] {
  const [word, ...rest] = example.hooks[event][0].hooks[0].command.split(/\s+/);
  expect(word).toBe('tollgate');
  return rest;
}

const POLICY = {
  rules: [
    { match: 'Bash(command=rm *)', level: 'deny' },
    { match: 'Bash(command=ls*)', level: 'automatic' },
    { match: 'Edit(file_path=/srv/app/*)', level: 'confirm', approvers: ['approver', 'admin'] },
  ],
};

let server: TestServer;
let api: ReturnType<typeof client>;
let agent: string;
let bea: string;
let otherTenantAgent: string;
let scratch: string;
let n = 0;

beforeAll(async () => {
  server = await startTestServer();
  api = client(server.url);
  agent = await server.token('claude-code', ['agent']);
  bea = await server.token('bea', ['approver'], { name: 'Bea' });
  otherTenantAgent = await server.token('claude-code', ['agent'], { tenant: 'acme' });
  const ann = await server.token('ann', ['admin'], { name: 'Ann' });
  expect((await api.put('/v1/policy', ann, POLICY)).status).toBe(200);
  scratch = mkdtempSync(join(tmpdir(), 'tollgate-claude-code-'));
});
afterAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  await server.stop();
});

/** A session of its own per test: a call left pending blocks its session's next proposal. */
function session(): string {
  return `0f6c1e2a-5b7d-4c8e-9a1f-${String(++n).padStart(12, '0')}`;
}

/** What Claude Code writes on a PreToolUse hook's stdin (hooks reference: common fields, then the tool's). */
function preToolUse(sessionId: string, toolName: string, toolInput: Record<string, unknown>, toolUseId: string) {
  return {
    session_id: sessionId,
    transcript_path: `/home/ann/.claude/projects/-srv-app/${sessionId}.jsonl`,
    cwd: '/srv/app',
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: toolName,
    tool_input: toolInput,
    tool_use_id: toolUseId,
  };
}

function postToolUse(pre: ReturnType<typeof preToolUse>, toolResponse: unknown) {
  return { ...pre, hook_event_name: 'PostToolUse', tool_response: toolResponse };
}

function hook(
  input: unknown,
  o: { event?: string; token?: string; url?: string; extra?: string[]; env?: Record<string, string> } = {},
): Promise<CliRun> {
  const event = o.event ?? (input as { hook_event_name: string }).hook_event_name;
  const env = cliEnv({ url: o.url ?? server.url, token: o.token ?? agent, ...o.env });
  return runCli([...argsOf(event), ...(o.extra ?? [])], env, typeof input === 'string' ? input : JSON.stringify(input));
}

/** The answer: stdout is one JSON document (Claude Code reads it whole), the exit code 0. */
function answer(run: CliRun): { permissionDecision: string; permissionDecisionReason: string; updatedInput?: unknown } {
  expect(run.code).toBe(0);
  const out = JSON.parse(run.stdout);
  expect(Object.keys(out)).toEqual(['hookSpecificOutput']);
  expect(out.hookSpecificOutput.hookEventName).toBe('PreToolUse');
  return out.hookSpecificOutput;
}

async function callOf(sessionId: string, toolUseId: string, token = agent): Promise<any> {
  const conv = await api.get(`/v1/conversations/claude-code.${sessionId}`, token);
  return conv.body.toolCalls?.find((c: { externalId: string }) => c.externalId === toolUseId);
}

describe('tollgate hook claude-code', () => {
  it('the example waits less than Claude Code lets the hook run', () => {
    const pre = example.hooks.PreToolUse[0].hooks[0];
    const wait = Number(argsOf('PreToolUse')[argsOf('PreToolUse').indexOf('--wait') + 1]);
    expect(wait).toBeGreaterThan(0);
    expect(pre.timeout).toBeGreaterThan(wait + 10);
  });

  it('an auto-approved call is claimed, then allowed; PostToolUse completes it with the result', async () => {
    const s = session();
    const pre = preToolUse(s, 'Bash', { command: 'ls -la', description: 'List files' }, 'toolu_01auto');
    const a = answer(await hook(pre));
    expect(a.permissionDecision).toBe('allow');
    expect(a.permissionDecisionReason).toMatch(/^Allowed by Tollgate's policy: Rule 1 \(Bash\(command=ls\*\)\)/);
    expect(a.updatedInput).toBeUndefined();
    const claimed = await callOf(s, 'toolu_01auto');
    expect(claimed).toMatchObject({ toolName: 'Bash', status: 'executed', arguments: { command: 'ls -la' } });
    expect(claimed.reason).toBe('List files');

    const response = { stdout: 'total 0\n', stderr: '', interrupted: false, isImage: false };
    const post = await hook(postToolUse(pre, response));
    expect(post).toMatchObject({ code: 0, stdout: '' });
    expect(await callOf(s, 'toolu_01auto')).toMatchObject({
      status: 'completed',
      result: { outcome: 'succeeded', output: response },
    });
    // Claude Code may run the hook again: the call is not proposed twice, and it is not allowed twice either.
    const again = answer(await hook(pre));
    expect(again.permissionDecision).toBe('deny');
  });

  it('a call the policy denies is denied with its reason (a shell rule sees the rm behind &&)', async () => {
    const s = session();
    const run = await hook(preToolUse(s, 'Bash', { command: 'ls && rm -rf /' }, 'toolu_01deny'));
    const a = answer(run);
    expect(a.permissionDecision).toBe('deny');
    expect(a.permissionDecisionReason).toMatch(/^Tollgate: Bash was denied by the policy: Denied by policy rule 0/);
    expect(run.stderr).toContain('denied by the policy');
    expect((await callOf(s, 'toolu_01deny')).status).toBe('rejected');
  });

  it('a held call waits while a person approves it through the API, then is allowed', async () => {
    const s = session();
    const pre = preToolUse(s, 'Edit', { file_path: 'src/a.ts', old_string: 'a', new_string: 'b' }, 'toolu_01held');
    const running = hook(pre);
    const call = await eventually(async () => {
      const c = await callOf(s, 'toolu_01held');
      return c?.status === 'pending' ? c : undefined;
    });
    // The relative path was proposed absolute, as the path rule sees it.
    expect(call.arguments.file_path).toBe('/srv/app/src/a.ts');
    const decided = await api.post(`/v1/tool-calls/${call.id}/decision`, bea, { decision: 'approve', reason: 'ok' });
    expect(decided.status).toBe(200);
    const a = answer(await running);
    expect(a.permissionDecision).toBe('allow');
    expect(a.permissionDecisionReason).toBe('Approved in Tollgate by Bea via api: ok');
    // What runs is what was approved: the absolute path.
    expect(a.updatedInput).toEqual({ file_path: '/srv/app/src/a.ts', old_string: 'a', new_string: 'b' });
    expect((await callOf(s, 'toolu_01held')).status).toBe('executed');
  });

  it("an approver's edit comes back as updatedInput", async () => {
    const s = session();
    const input = { file_path: '/srv/app/b.ts', old_string: 'x', new_string: 'y' };
    const running = hook(preToolUse(s, 'Edit', input, 'toolu_01edit'));
    const call = await eventually(async () => {
      const c = await callOf(s, 'toolu_01edit');
      return c?.status === 'pending' ? c : undefined;
    });
    const edited = { ...input, new_string: 'z' };
    await api.post(`/v1/tool-calls/${call.id}/decision`, bea, { decision: 'approve', arguments: edited });
    const a = answer(await running);
    expect(a.permissionDecision).toBe('allow');
    expect(a.permissionDecisionReason).toMatch(/\(with edited arguments\)$/);
    expect(a.updatedInput).toEqual(edited);
  });

  it('no decision within --wait: denied, saying the call still waits in Tollgate', async () => {
    const s = session();
    const run = await hook(
      preToolUse(s, 'Edit', { file_path: '/srv/app/c.ts', old_string: 'a', new_string: 'b' }, 'toolu_01late'),
      { extra: ['--wait', '2'] },
    );
    const a = answer(run);
    expect(a.permissionDecision).toBe('deny');
    const call = await callOf(s, 'toolu_01late');
    expect(a.permissionDecisionReason).toBe(
      `Tollgate: no decision on Edit within 2 s. The call (${call.id}) still waits for a person in Tollgate and will not run from this request; once it is decided, ask again`,
    );
    expect(call.status).toBe('pending');
  });

  it('a call left pending holds up the next one of its session until a person decides it', async () => {
    const s = session();
    const first = preToolUse(s, 'Bash', { command: 'make deploy' }, 'toolu_01first');
    expect(answer(await hook(first, { extra: ['--wait', '1'] })).permissionDecision).toBe('deny');
    const held = await callOf(s, 'toolu_01first');
    const next = preToolUse(s, 'Read', { file_path: '/srv/app/README.md' }, 'toolu_01next');
    const blocked = answer(await hook(next, { extra: ['--wait', '1'] }));
    expect(blocked.permissionDecision).toBe('deny');
    expect(blocked.permissionDecisionReason).toMatch(
      new RegExp(`^Tollgate: an earlier call of this session \\(${held.id}\\) still waits for a person`),
    );
    // Waiting, it goes on once the earlier call is decided: a read-only Read is then let through.
    const running = hook({ ...next, tool_use_id: 'toolu_01after' });
    await api.post(`/v1/tool-calls/${held.id}/decision`, bea, { decision: 'reject', reason: 'not now' });
    const a = answer(await running);
    expect(a.permissionDecision).toBe('allow');
    expect(a.permissionDecisionReason).toMatch(/^Allowed by Tollgate's policy: Tool flags .*isReadOnly → automatic/);
  });

  it('Tollgate unreachable: denied (fail closed), or ask with --on-error ask', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const pre = preToolUse(session(), 'Bash', { command: 'ls' }, 'toolu_01down');
    const denied = answer(await hook(pre, { url }));
    expect(denied.permissionDecision).toBe('deny');
    expect(denied.permissionDecisionReason).toMatch(
      /^Tollgate could not decide \(.*\), so the call is denied \(fail closed\)$/,
    );
    // A URL with credentials in it: the reason Claude is shown names the server without them.
    const secret = answer(await hook(pre, { url: url.replace('//', '//ann:s3cret@') }));
    expect(secret.permissionDecision).toBe('deny');
    expect(secret.permissionDecisionReason).toContain(`cannot reach Tollgate at ${url}`);
    expect(JSON.stringify(secret)).not.toMatch(/ann:|s3cret/);
    const asked = answer(await hook(pre, { url, extra: ['--on-error', 'ask'] }));
    expect(asked.permissionDecision).toBe('ask');
    expect(asked.permissionDecisionReason).toMatch(/asking you instead \(--on-error ask\)$/);
  });

  it('--wait is the whole budget: a Tollgate that never answers the claim gets a deny while the request still hangs', async () => {
    // A stand-in that takes the connection and the request, and never answers: the proposal that claims hangs.
    const sockets: Socket[] = [];
    let received = '';
    const standIn = createServer((socket) => {
      sockets.push(socket);
      socket.on('data', (d) => (received += d));
    });
    await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = standIn.address() as { port: number };
      const run = await hook(preToolUse(session(), 'Bash', { command: 'ls' }, 'toolu_01hang'), {
        url: `http://127.0.0.1:${port}`,
        extra: ['--wait', '2'],
      });
      const a = answer(run);
      expect(a.permissionDecision).toBe('deny');
      expect(a.permissionDecisionReason).toBe(
        'Tollgate: no answer from Tollgate within 2 s, so the call is denied; it may still wait there',
      );
      expect(received).toMatch(/^POST \/v1\/conversations\/claude-code\.[^/]+\/tool-calls HTTP/);
      expect(received).toContain('"claim":true');
      // Nothing was ever answered: the hook's answer came while its request was still waiting for one.
      expect(sockets.every((s) => s.bytesWritten === 0)).toBe(true);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => standIn.close(resolve));
    }
  });

  it('a token Tollgate refuses is an error too: denied, and the token is never printed', async () => {
    const run = await hook(preToolUse(session(), 'Bash', { command: 'ls' }, 'toolu_01tok'), {
      token: 'not-a-token-s3cret',
    });
    const a = answer(run);
    expect(a.permissionDecision).toBe('deny');
    expect(a.permissionDecisionReason).toMatch(/^Tollgate could not decide \(unauthenticated: /);
    expect(run.stdout + run.stderr).not.toContain('s3cret');
  });

  it('PostToolUseFailure reports the call failed', async () => {
    const s = session();
    const pre = preToolUse(s, 'Bash', { command: 'ls /nope' }, 'toolu_01fail');
    expect(answer(await hook(pre)).permissionDecision).toBe('allow');
    const failure = { ...pre, hook_event_name: 'PostToolUseFailure', error: 'ls: /nope: No such file or directory' };
    expect(await hook(failure)).toMatchObject({ code: 0, stdout: '' });
    expect(await callOf(s, 'toolu_01fail')).toMatchObject({
      status: 'completed',
      result: { outcome: 'failed', error: 'ls: /nope: No such file or directory' },
    });
  });

  it('PostToolUse of a call Tollgate never saw (Claude Code allowed it itself) exits 0 and says nothing', async () => {
    const s = session();
    // A session Tollgate has never seen, then a call of a session it has: neither has the call to report.
    const unseen = preToolUse(s, 'Read', { file_path: '/srv/app/a.ts' }, 'toolu_01unseen');
    expect(await hook(postToolUse(unseen, { content: 'a' }))).toEqual({ code: 0, stdout: '', stderr: '' });
    const seen = preToolUse(s, 'Bash', { command: 'ls' }, 'toolu_01seen');
    expect(answer(await hook(seen)).permissionDecision).toBe('allow');
    const other = preToolUse(s, 'Read', { file_path: '/srv/app/b.ts' }, 'toolu_01other');
    expect(await hook(postToolUse(other, { content: 'b' }))).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await hook({ ...other, hook_event_name: 'PostToolUseFailure', error: 'x' })).toMatchObject({ code: 0 });
    // A real failure is still one: a token Tollgate refuses.
    const refused = await hook(postToolUse(seen, {}), { token: 'not-a-token' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/could not be reported to Tollgate \(unauthenticated: /);
    expect((await callOf(s, 'toolu_01seen')).status).toBe('executed');
  });

  it('a result holding NUL, or an emoji where it is cut, is still reported: the call completes', async () => {
    const s = session();
    const pre = preToolUse(s, 'Bash', { command: 'ls -b' }, 'toolu_01nul');
    expect(answer(await hook(pre)).permissionDecision).toBe('allow');
    expect(await hook(postToolUse(pre, { stdout: 'a\u0000b', stderr: 'lone \uD83D' }))).toMatchObject({ code: 0 });
    expect(await callOf(s, 'toolu_01nul')).toMatchObject({
      status: 'completed',
      result: { outcome: 'succeeded', output: { stdout: 'a\uFFFDb', stderr: 'lone \uFFFD' } },
    });

    // Over 64 KiB, its head is kept: 16,384 characters of its JSON, which would end inside the emoji.
    const big = preToolUse(s, 'Bash', { command: 'ls -R' }, 'toolu_01cut');
    expect(answer(await hook(big)).permissionDecision).toBe('allow');
    const stdout = `${'x'.repeat(16_384 - '{"stdout":"'.length - 1)}😀${'y'.repeat(70_000)}\u0000`;
    expect(await hook(postToolUse(big, { stdout }))).toMatchObject({ code: 0 });
    const done = await callOf(s, 'toolu_01cut');
    expect(done.status).toBe('completed');
    expect(done.result.output.truncated).toBe(true);
    expect(done.result.output.head).toBe(`{"stdout":"${'x'.repeat(16_384 - '{"stdout":"'.length - 1)}`);
  });

  it("another tenant's token cannot report a call it did not propose (to it there is no such call)", async () => {
    const s = session();
    const pre = preToolUse(s, 'Bash', { command: 'ls' }, 'toolu_01wall');
    expect(answer(await hook(pre)).permissionDecision).toBe('allow');
    const post = postToolUse(pre, { stdout: 'secret-listing' });
    // Its tenant has no such session: as for any call Tollgate never saw, there is nothing to report.
    expect(await hook(post, { token: otherTenantAgent })).toEqual({ code: 0, stdout: '', stderr: '' });
    expect((await callOf(s, 'toolu_01wall')).status).toBe('executed');
    expect((await hook(post)).code).toBe(0);
    expect((await callOf(s, 'toolu_01wall')).status).toBe('completed');
  });

  it('as a PermissionRequest hook it answers with decision.behavior', async () => {
    const s = session();
    const req = {
      ...preToolUse(s, 'Bash', { command: 'rm -rf build' }, 'toolu_01perm'),
      hook_event_name: 'PermissionRequest',
    };
    const run = await hook(req, { event: 'PreToolUse' });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PermissionRequest',
        decision: { behavior: 'deny', message: expect.stringMatching(/^Tollgate: Bash was denied by the policy/) },
      },
    });
    // `ask` there is saying nothing: Claude Code shows its own dialog.
    const asked = await hook(req, {
      event: 'PreToolUse',
      url: `http://127.0.0.1:${await freePort()}`,
      extra: ['--on-error', 'ask'],
    });
    expect(asked).toMatchObject({ code: 0, stdout: '' });
  });

  it('bad stdin: not JSON, too big, a field missing — exit 2 (Claude Code blocks the call), said on stderr', async () => {
    const notJson = await hook('{"hook_event_name": "PreToolUse"', { event: 'PreToolUse' });
    expect(notJson).toMatchObject({ code: 2, stdout: '' });
    expect(notJson.stderr).toMatch(/stdin: not JSON/);

    const big = preToolUse(
      session(),
      'Write',
      { file_path: '/srv/app/big', content: 'x'.repeat(1024 * 1024) },
      'toolu_01big',
    );
    const tooBig = await hook(big);
    expect(tooBig).toMatchObject({ code: 2, stdout: '' });
    expect(tooBig.stderr).toMatch(/stdin: more than 1024 KiB; refused/);

    const { tool_name: _omitted, ...noTool } = preToolUse(session(), 'Bash', { command: 'ls' }, 'toolu_01bad');
    const missing = await hook(noTool);
    expect(missing).toMatchObject({ code: 2, stdout: '' });
    expect(missing.stderr).toMatch(/stdin: tool_name is missing; the call is blocked/);
  });

  it('--install adds the entries to .claude/settings.json, keeps what is there, and adds nothing the second time', async () => {
    const project = join(scratch, 'project');
    mkdirSync(join(project, '.claude'), { recursive: true });
    const file = join(project, '.claude', 'settings.json');
    const mine = { matcher: 'Write', hooks: [{ type: 'command', command: 'prettier --check', timeout: 5 }] };
    writeFileSync(file, JSON.stringify({ permissions: { allow: ['Read'] }, hooks: { PostToolUse: [mine] } }));
    const install = () => runIn(project, ['hook', 'claude-code', '--install'], { HOME: scratch });

    const first = await install();
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`${file}: added PreToolUse, PostToolUse, PostToolUseFailure (timeout 300 s`);
    const written = JSON.parse(readFileSync(file, 'utf8'));
    expect(written.permissions).toEqual({ allow: ['Read'] });
    expect(written.hooks.PostToolUse[0]).toEqual(mine);
    // The example's entries, with this CLI named by its absolute path instead of `tollgate`.
    for (const event of ['PreToolUse', 'PostToolUse', 'PostToolUseFailure']) {
      const installed: Entry[] = written.hooks[event];
      const ours = installed[installed.length - 1];
      const expected = example.hooks[event][0];
      expect(ours.matcher).toBe(expected.matcher);
      expect(ours.hooks[0].timeout).toBe(expected.hooks[0].timeout);
      expect(ours.hooks[0].command).toBe(
        `${process.execPath} ${BIN} ${expected.hooks[0].command.replace(/^tollgate /, '')}`,
      );
    }

    const before = readFileSync(file, 'utf8');
    const second = await install();
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('nothing changed');
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('--install --scope user writes ~/.claude/settings.json; a settings file that is not JSON is left alone (exit 2)', async () => {
    const home = join(scratch, 'home');
    mkdirSync(home, { recursive: true });
    const ok = await runIn(scratch, ['hook', 'claude-code', '--install', '--scope', 'user'], { HOME: home });
    expect(ok.code).toBe(0);
    expect(Object.keys(JSON.parse(readFileSync(join(home, '.claude', 'settings.json'), 'utf8')).hooks)).toEqual([
      'PreToolUse',
      'PostToolUse',
      'PostToolUseFailure',
    ]);
    const broken = join(scratch, 'broken');
    mkdirSync(join(broken, '.claude'), { recursive: true });
    writeFileSync(join(broken, '.claude', 'settings.json'), '{"hooks": ');
    const refused = await runIn(broken, ['hook', 'claude-code', '--install'], { HOME: home });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/not valid JSON/);
    expect(readFileSync(join(broken, '.claude', 'settings.json'), 'utf8')).toBe('{"hooks": ');
  });
});

/** The CLI in another working directory (where `--install` writes). */
function runIn(cwd: string, args: string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: cliEnv({ url: server.url, ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
