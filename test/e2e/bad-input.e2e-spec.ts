/**
 * Bad input (CONTRACT §3, §6, §11): every failure is an RFC 9457 problem with a stable code, never a
 * 500. Unknown fields are refused at every documented level, limits are enforced, and lists page
 * with opaque cursors.
 */
import { client, Reply } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
let http: ReturnType<typeof client>;
let agent: string;
let approver: string;
let admin: string;
let pending: any; // a pending call, for decision bodies
let executed: any; // a claimed call, for result bodies

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
  agent = await server.token('agent-bad', ['agent']);
  approver = await server.token('alice', ['approver']);
  admin = await server.token('root', ['admin']);
  expect((await http.put('/v1/tools/get_time', admin, { isReadOnly: true })).status).toBe(201);
  expect((await http.post('/v1/conversations', agent, { id: 'bad-pending' })).status).toBe(201);
  [pending] = (
    await http.post('/v1/conversations/bad-pending/tool-calls', agent, {
      toolCalls: [{ toolName: 'send_email', arguments: {} }],
    })
  ).body.toolCalls;
  expect(pending.status).toBe('pending');
  expect((await http.post('/v1/conversations', agent, { id: 'bad-run' })).status).toBe(201);
  [executed] = (
    await http.post('/v1/conversations/bad-run/tool-calls', agent, {
      toolCalls: [{ toolName: 'get_time', arguments: {} }],
    })
  ).body.toolCalls;
  expect((await http.post(`/v1/tool-calls/${executed.id}/execution`, agent)).status).toBe(200);
  expect((await http.post('/v1/conversations', agent, { id: 'bad-propose' })).status).toBe(201);
});

afterAll(async () => {
  await server?.stop();
});

function expectProblem(res: Reply, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({
    type: expect.any(String),
    title: expect.any(String),
    status,
    detail: expect.any(String),
    code,
  });
}

/** 400 validation_failed whose body names `name` (a field or its path). */
function expectInvalid(res: Reply, name?: string) {
  expectProblem(res, 400, 'validation_failed');
  if (name) expect(JSON.stringify(res.body)).toContain(name);
}

const call = (extra: Record<string, unknown> = {}) => ({ toolName: 'get_time', arguments: { tz: 'UTC' }, ...extra });
const propose = (body: unknown) => http.post('/v1/conversations/bad-propose/tool-calls', agent, body);

describe('unknown fields are refused at every documented level', () => {
  it('at the top of a proposal', async () => {
    expectInvalid(await propose({ toolCalls: [call()], extraTop: 1 }), 'extraTop');
  });

  it('in toolCalls[i]', async () => {
    expectInvalid(await propose({ toolCalls: [call(), call({ extraCall: true })] }), 'extraCall');
  });

  it('in annotations', async () => {
    expectInvalid(
      await propose({ toolCalls: [call({ annotations: { destructive: true, extraAnnotation: true } })] }),
      'extraAnnotation',
    );
  });

  it('in display', async () => {
    expectInvalid(await propose({ toolCalls: [call({ display: { title: 'T', extraDisplay: 'x' } })] }), 'extraDisplay');
  });

  it('in display.fields[i]', async () => {
    expectInvalid(
      await propose({
        toolCalls: [
          call({
            display: {
              fields: [
                { label: 'a', value: 'b' },
                { label: 'c', value: 'd', extraField: 1 },
              ],
            },
          }),
        ],
      }),
      'extraField',
    );
  });

  it('at the top of a conversation and in its user', async () => {
    expectInvalid(await http.post('/v1/conversations', agent, { id: 'bad-x1', extraConv: 1 }), 'extraConv');
    expectInvalid(
      await http.post('/v1/conversations', agent, { id: 'bad-x2', user: { id: 'u', extraUser: 1 } }),
      'extraUser',
    );
    expectProblem(await http.get('/v1/conversations/bad-x1', agent), 404, 'not_found');
  });

  it('in a decision body', async () => {
    expectInvalid(
      await http.post(`/v1/tool-calls/${pending.id}/decision`, approver, { decision: 'approve', extraDecision: 1 }),
      'extraDecision',
    );
  });

  it('in a result body', async () => {
    expectInvalid(
      await http.post(`/v1/tool-calls/${executed.id}/result`, agent, { outcome: 'succeeded', extraResult: 1 }),
      'extraResult',
    );
  });

  it('in a tool registration', async () => {
    expectInvalid(await http.put('/v1/tools/get_time', admin, { isReadOnly: true, extraTool: 1 }), 'extraTool');
  });

  it('but not inside arguments, metadata or output, which are free JSON', async () => {
    expect(
      (await http.post('/v1/conversations', agent, { id: 'bad-free', metadata: { anything: { goes: [1, 'two'] } } }))
        .status,
    ).toBe(201);
    const res = await http.post('/v1/conversations/bad-free/tool-calls', agent, {
      toolCalls: [{ toolName: 'get_time', arguments: { nested: { deep: [{ x: 1 }] }, extra: null } }],
    });
    expect(res.status).toBe(201);
    expect(res.body.toolCalls[0].arguments).toEqual({ nested: { deep: [{ x: 1 }] }, extra: null });
  });

  it('and nothing is recorded for a refused proposal', async () => {
    const conv = await http.get('/v1/conversations/bad-propose', agent);
    expect(conv.body.toolCalls).toEqual([]);
  });
});

describe('the shape of a proposal', () => {
  it('requires arguments, as a JSON object', async () => {
    expectInvalid(await propose({ toolCalls: [{ toolName: 'get_time' }] }), 'arguments');
    for (const bad of [null, [], 'tz=UTC', 42, true]) {
      expectInvalid(await propose({ toolCalls: [{ toolName: 'get_time', arguments: bad }] }), 'arguments');
    }
  });

  it('takes 1 to 64 calls: 0 and 65 are refused, 64 accepted', async () => {
    expectInvalid(await propose({ toolCalls: [] }), 'toolCalls');
    expectInvalid(await propose({ toolCalls: Array.from({ length: 65 }, () => call()) }), 'toolCalls');
    expectInvalid(await propose({}), 'toolCalls');
    expectInvalid(await propose({ toolCalls: call() }), 'toolCalls');
    expect((await http.post('/v1/conversations', agent, { id: 'bad-64' })).status).toBe(201);
    const ok = await http.post('/v1/conversations/bad-64/tool-calls', agent, {
      toolCalls: Array.from({ length: 64 }, (_, i) => call({ id: `c${i}` })),
    });
    expect(ok.status).toBe(201);
    expect(ok.body.toolCalls).toHaveLength(64);
  });

  it('refuses confidence outside [0, 1] and a negative estimatedCost', async () => {
    expectInvalid(await propose({ toolCalls: [call({ confidence: -0.01 })] }), 'confidence');
    expectInvalid(await propose({ toolCalls: [call({ confidence: 1.01 })] }), 'confidence');
    expectInvalid(await propose({ toolCalls: [call({ confidence: '0.5' })] }), 'confidence');
    expectInvalid(await propose({ toolCalls: [call({ estimatedCost: -1 })] }), 'estimatedCost');
    expectInvalid(await propose({ toolCalls: [call({ estimatedCost: 'free' })] }), 'estimatedCost');
  });

  it('accepts the bounds: confidence 0 and 1, estimatedCost 0', async () => {
    expect((await http.post('/v1/conversations', agent, { id: 'bad-bounds' })).status).toBe(201);
    const res = await http.post('/v1/conversations/bad-bounds/tool-calls', agent, {
      toolCalls: [call({ confidence: 0, estimatedCost: 0 }), call({ confidence: 1 })],
    });
    expect(res.status).toBe(201);
    expect(res.body.toolCalls[0]).toMatchObject({ confidence: 0, estimatedCost: 0 });
  });

  it('refuses bad tool-call ids and tool names', async () => {
    for (const id of ['', 'has space', 'slash/no', 'x'.repeat(129), 'é', 7]) {
      expectInvalid(await propose({ toolCalls: [call({ id })] }), 'id');
    }
    for (const toolName of ['', 'bad name', 'rm -rf', 'x'.repeat(129), 'tool/sub', null]) {
      expectInvalid(await propose({ toolCalls: [{ toolName, arguments: {} }] }), 'toolName');
    }
    expectInvalid(await propose({ toolCalls: [{ arguments: {} }] }), 'toolName');
  });

  it('refuses text PostgreSQL cannot store (a NUL character) with 400 naming where, not 500', async () => {
    expectInvalid(
      await propose({ toolCalls: [call({ arguments: { cmd: 'ls\u0000rm' } })] }),
      'toolCalls[0].arguments.cmd',
    );
    expectInvalid(await http.post('/v1/conversations', agent, { metadata: { ['k\u0000']: 1 } }), 'metadata.k');
    expectInvalid(await http.get('/v1/tool-calls/tc_%00', agent));
  });

  it('keeps free JSON exactly as sent, keys named like object methods included', async () => {
    const args = {
      toString: 'x',
      valueOf: 1,
      constructor: { prototype: 2 },
      hasOwnProperty: null,
      cmd: 'ls',
      nested: [{ constructor: 'y' }],
    };
    const r = await propose({ toolCalls: [call({ arguments: args })] });
    expect(r.status).toBe(201);
    expect(r.body.toolCalls[0].arguments).toEqual(args);
    const back = await http.get(`/v1/tool-calls/${r.body.toolCalls[0].id}`, agent);
    expect(back.body.arguments).toEqual(args);
  });

  it('refuses fields named like object internals outside free JSON as unknown, not 500', async () => {
    expectInvalid(await http.post('/v1/conversations', agent, JSON.parse('{"constructor": 1}')), 'constructor');
    expectInvalid(
      await http.post('/v1/conversations', agent, JSON.parse('{"user": {"id": "u", "__proto__": {"x": 1}}}')),
      '__proto__',
    );
    expectInvalid(await propose({ toolCalls: [call({ toString: 1 })] }), 'toString');
  });

  it('answers an oversized request line with a 431 problem, not a bare status', async () => {
    const r = await http.get(`/v1/tools?x=${'a'.repeat(20_000)}`, agent);
    expect(r.status).toBe(431);
    expect(r.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(r.body).toMatchObject({ status: 431, code: 'headers_too_large' });
  });

  it('refuses bodies nested deeper than 64 levels with 400, never a stack overflow', async () => {
    const deep = '['.repeat(5000) + '"leaf"' + ']'.repeat(5000); // built as text: too deep for JSON.stringify here
    const json = { 'content-type': 'application/json' };
    expectInvalid(
      await http.call('POST', '/v1/conversations/bad-propose/tool-calls', {
        token: agent,
        headers: json,
        raw: `{"toolCalls":[{"toolName":"x","arguments":{"deep":${deep}}}]}`,
      }),
      'nested',
    );
    expectInvalid(
      await http.call('PUT', '/v1/tools/deep_tool', { token: agent, headers: json, raw: `{"destructive":${deep}}` }),
      'nested',
    );
  });

  it('refuses the same tool-call id twice in one step', async () => {
    expectInvalid(await propose({ toolCalls: [call({ id: 'dup' }), call({ id: 'dup' })] }), 'dup');
  });

  const malformed: [string, unknown[], string | undefined][] = [
    ['a null call', [null], 'toolCalls'],
    ['a number as a call', [1], 'toolCalls'],
    ['a string as a call', ['get_time'], 'toolCalls'],
    ['an array as a call', [[]], 'toolCalls'],
    ['a string as annotations', [call({ annotations: 'destructive' })], 'annotations'],
    ['an array as annotations', [call({ annotations: [] })], 'annotations'],
    ['a string flag in annotations', [call({ annotations: { destructive: 'yes' } })], 'destructive'],
    ['a string as display', [call({ display: 'Delete' })], 'display'],
    ['an array as display', [call({ display: [] })], 'display'],
    ['a null display field', [call({ display: { fields: [null] } })], 'fields'],
    ['a display field without value', [call({ display: { fields: [{ label: 'a' }] } })], 'value'],
    ['a number as reason', [call({ reason: 42 })], 'reason'],
  ];
  it.each(malformed)('refuses %s with 400 naming it, not 500', async (_what, toolCalls, name) => {
    expectInvalid(await propose({ toolCalls }), name);
  });
});

describe('other bodies', () => {
  it('refuses bad conversation ids and users', async () => {
    for (const id of ['has space', 'x'.repeat(129), '', 12])
      expectInvalid(await http.post('/v1/conversations', agent, { id }), 'id');
    expectInvalid(await http.post('/v1/conversations', agent, { user: { roles: ['admin'] } }), 'id');
    expectInvalid(await http.post('/v1/conversations', agent, { user: 'alice' }), 'user');
    expectInvalid(await http.post('/v1/conversations', agent, { user: { id: 'u', roles: 'admin' } }), 'roles');
    expectInvalid(await http.post('/v1/conversations', agent, { metadata: [1, 2] }), 'metadata');
  });

  it('refuses a user that is an array rather than an object with an id', async () => {
    expectInvalid(await http.post('/v1/conversations', agent, { id: 'bad-user-array', user: [] }), 'user');
    expectProblem(await http.get('/v1/conversations/bad-user-array', agent), 404, 'not_found');
  });

  it('refuses a bad tool name in the path', async () => {
    expectInvalid(await http.put('/v1/tools/bad%20name', admin, {}), 'name');
    expectInvalid(await http.put(`/v1/tools/${'x'.repeat(129)}`, admin, {}), 'name');
    expectInvalid(await http.put('/v1/tools/get_time', admin, { isReadOnly: 'yes' }), 'isReadOnly');
  });

  it('refuses bad decisions', async () => {
    const decide = (body: unknown) => http.post(`/v1/tool-calls/${pending.id}/decision`, approver, body);
    expectInvalid(await decide({}), 'decision');
    expectInvalid(await decide({ decision: 'maybe' }), 'decision');
    expectInvalid(await decide({ decision: 'always_allow', scope: 'world' }), 'scope');
    expectInvalid(await decide({ decision: 'approve', arguments: [1] }), 'arguments');
    expectInvalid(await decide({ decision: 'approve', reason: 5 }), 'reason');
  });

  it('refuses arguments given with reject (and with always_allow)', async () => {
    expectInvalid(
      await http.post(`/v1/tool-calls/${pending.id}/decision`, approver, {
        decision: 'reject',
        arguments: { to: 'x' },
      }),
      'arguments',
    );
    expectInvalid(
      await http.post(`/v1/tool-calls/${pending.id}/decision`, approver, {
        decision: 'always_allow',
        arguments: { to: 'x' },
      }),
      'arguments',
    );
    expect((await http.get(`/v1/tool-calls/${pending.id}`, approver)).body.status).toBe('pending');
  });

  it('refuses bad results', async () => {
    const report = (body: unknown) => http.post(`/v1/tool-calls/${executed.id}/result`, agent, body);
    expectInvalid(await report({}), 'outcome');
    expectInvalid(await report({ outcome: 'ok' }), 'outcome');
    expectInvalid(await report({ outcome: 'failed', error: { message: 'x' } }), 'error');
    expect((await http.get(`/v1/tool-calls/${executed.id}`, agent)).body.status).toBe('executed');
  });

  it('refuses bodies that are not JSON objects', async () => {
    for (const raw of ['[]', 'null', '"text"', '42']) {
      const res = await http.call('POST', '/v1/conversations/bad-propose/tool-calls', {
        token: agent,
        raw,
        headers: { 'content-type': 'application/json' },
      });
      expectProblem(res, 400, 'validation_failed');
    }
  });

  it('refuses invalid JSON with 400', async () => {
    for (const raw of ['{"toolCalls": [', '{toolCalls: []}', "{'a': 1}", '{"a": 1,}']) {
      const res = await http.call('POST', '/v1/conversations/bad-propose/tool-calls', {
        token: agent,
        raw,
        headers: { 'content-type': 'application/json' },
      });
      expectProblem(res, 400, 'validation_failed');
    }
    const dec = await http.call('POST', `/v1/tool-calls/${pending.id}/decision`, {
      token: approver,
      raw: '{"decision":',
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(dec, 400, 'validation_failed');
  });

  it('answers a body in another media type with a problem, not a 500', async () => {
    const res = await http.call('POST', '/v1/conversations/bad-propose/tool-calls', {
      token: agent,
      raw: 'toolCalls=1',
      headers: { 'content-type': 'text/plain' },
    });
    expect([400, 415]).toContain(res.status);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });
});

describe('size limits', () => {
  it('refuses a body over 1 MiB with 413 payload_too_large', async () => {
    const big = { toolCalls: [call({ arguments: { blob: 'x'.repeat(1024 * 1024 + 16) } })] };
    expectProblem(await propose(big), 413, 'payload_too_large');
    expectProblem(
      await http.put('/v1/policy', admin, {
        rules: [{ match: 'x', level: 'confirm', reason: 'y'.repeat(1024 * 1024 + 16) }],
      }),
      413,
      'payload_too_large',
    );
  });

  it('accepts a body just under 1 MiB', async () => {
    expect((await http.post('/v1/conversations', agent, { id: 'bad-big-ok' })).status).toBe(201);
    const res = await http.post('/v1/conversations/bad-big-ok/tool-calls', agent, {
      toolCalls: [call({ arguments: { blob: 'x'.repeat(1000 * 1000) } })],
    });
    expect(res.status).toBe(201);
  });

  it('refuses a result whose output is over 64 KiB with 413, and accepts one within it', async () => {
    const tooBig = await http.post(`/v1/tool-calls/${executed.id}/result`, agent, {
      outcome: 'succeeded',
      output: { text: 'x'.repeat(64 * 1024) },
    });
    expectProblem(tooBig, 413, 'payload_too_large');
    expect((await http.get(`/v1/tool-calls/${executed.id}`, agent)).body.status).toBe('executed');
    const ok = await http.post(`/v1/tool-calls/${executed.id}/result`, agent, {
      outcome: 'succeeded',
      output: { text: 'x'.repeat(60 * 1024) },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe('completed');
  });
});

describe('query parameters', () => {
  it('refuses wait outside 0–60 or not a whole number with 400', async () => {
    for (const wait of ['61', 'abc', '-1', '1.5', '1e1', ' 5']) {
      expectInvalid(await http.get(`/v1/tool-calls/${pending.id}?wait=${encodeURIComponent(wait)}`, agent), 'wait');
    }
  });

  it('refuses limit outside 1–1000 and cursors it did not issue with 400', async () => {
    for (const path of ['/v1/conversations', '/v1/approvals']) {
      const token = path === '/v1/approvals' ? approver : agent;
      for (const limit of ['0', '1001', 'abc', '-5', '2.5'])
        expectInvalid(await http.get(`${path}?limit=${limit}`, token), 'limit');
      for (const cursor of ['not-a-cursor', 'eyJ4IjoxfQ', '%00'])
        expectInvalid(await http.get(`${path}?cursor=${cursor}`, token), 'cursor');
    }
    expectInvalid(await http.get('/v1/tools?limit=0', agent), 'limit');
  });

  it('refuses an unknown status filter with 400', async () => {
    expectInvalid(await http.get('/v1/conversations?status=sleeping', agent), 'status');
    expectInvalid(await http.get('/v1/approvals?status=sleeping', approver), 'status');
  });

  it('accepts the limits themselves', async () => {
    expect((await http.get('/v1/conversations?limit=1', agent)).status).toBe(200);
    expect((await http.get('/v1/conversations?limit=1000', agent)).status).toBe(200);
    expect((await http.get(`/v1/tool-calls/${pending.id}?wait=0`, agent)).status).toBe(200);
  });
});

describe('unknown routes and ids', () => {
  it('answers an unknown route with a 404 problem', async () => {
    expectProblem(await http.get('/v1/nothing-here', agent), 404, 'not_found');
    expectProblem(await http.get('/nothing-here'), 404, 'not_found');
    expectProblem(await http.post('/v1/tool-calls', agent, {}), 404, 'not_found');
  });

  it('answers an unknown conversation or tool call with a 404 problem', async () => {
    expectProblem(await http.get('/v1/conversations/no-such-conversation', agent), 404, 'not_found');
    expectProblem(await http.get('/v1/tool-calls/no-such-call', approver), 404, 'not_found');
    expectProblem(await http.post('/v1/tool-calls/no-such-call/execution', agent), 404, 'not_found');
  });
});

describe('paging through conversations', () => {
  it('visits every conversation exactly once with limit=2, ending with a null nextCursor', async () => {
    const pager = await server.token('agent-pager', ['agent']);
    const ids = ['page-1', 'page-2', 'page-3', 'page-4', 'page-5'];
    for (const id of ids) expect((await http.post('/v1/conversations', pager, { id, title: id })).status).toBe(201);

    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const res: Reply = await http.get(
        `/v1/conversations?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        pager,
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.items.map((c: any) => c.id));
      sizes.push(res.body.items.length);
      cursor = res.body.nextCursor;
      if (cursor === null) break;
      expect(typeof cursor).toBe('string');
    }
    expect(cursor).toBeNull();
    expect(sizes.slice(0, 2)).toEqual([2, 2]);
    expect([...seen].sort()).toEqual(ids);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('answers the whole list in one page by default, with a null nextCursor', async () => {
    const pager = await server.token('agent-pager', ['agent']);
    const res = await http.get('/v1/conversations', pager);
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(5);
    expect(res.body.nextCursor).toBeNull();
  });
});
