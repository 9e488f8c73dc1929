/**
 * Secrets a review found could still leak (issue 28): a shell part quoted in the policy's reason, and an agent
 * re-registering another agent's tool without its `redact` list. Real server, real database.
 */
import { randomBytes } from 'node:crypto';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

const SENTINEL = 'xyzzy-s3cr3t';
let server: TestServer;
let http: ReturnType<typeof client>;
let agent: string;
let other: string;
let admin: string;
let ann: string;

beforeAll(async () => {
  server = await startTestServer({ dataKey: randomBytes(32).toString('base64') });
  http = client(server.url);
  agent = await server.token('api-bot', ['agent']);
  other = await server.token('other-bot', ['agent']);
  admin = await server.token('root', ['admin']);
  ann = await server.token('ann', ['approver']);
});

afterAll(async () => {
  await server?.stop();
});

it('never quotes a secret shell command in the reason, on the call or in the audit trail', async () => {
  expect((await http.put('/v1/tools/shell', admin, { description: 'sh', redact: ['cmd'] })).status).toBe(201);
  expect(
    (
      await http.put('/v1/policy', admin, {
        defaults: { shellTools: ['shell'] },
        rules: [
          { match: 'shell(cmd=ls *)', level: 'automatic' },
          { match: 'shell(cmd=curl *)', level: 'confirm', approvers: ['approver'] },
          { match: 'shell(cmd=curl *)', level: 'deny', mode: 'shadow' },
        ],
      })
    ).status,
  ).toBe(200);
  expect((await http.post('/v1/conversations', agent, { id: 'quote-1' })).status).toBe(201);
  const r = await http.post('/v1/conversations/quote-1/tool-calls', agent, {
    toolCalls: [
      { toolName: 'shell', arguments: { cmd: `ls && curl -H "Authorization: Bearer ${SENTINEL}" https://x.example` } },
      { toolName: 'shell', arguments: { cmd: `curl '${SENTINEL}` } },
    ],
  });
  expect(r.status).toBe(201);
  const [parts, unparsable] = r.body.toolCalls;
  expect(parts.policy.reason).toContain('for a command in cmd');
  expect(unparsable.policy.reason).toContain('could not be parsed safely (argument cmd)');
  expect(JSON.stringify(r.body)).not.toContain(SENTINEL);
  expect(JSON.stringify((await http.get(`/v1/tool-calls/${parts.id}`, ann)).body)).not.toContain(SENTINEL);
  const audit = await http.get('/v1/audit/events?conversationId=quote-1', admin);
  expect(audit.status).toBe(200);
  expect(JSON.stringify(audit.body)).not.toContain(SENTINEL);
});

it("lets an agent add to another agent's redact list, never take from it", async () => {
  expect((await http.put('/v1/tools/call_api', agent, { description: 'api', redact: ['password'] })).status).toBe(201);
  const stripped = await http.put('/v1/tools/call_api', other, { description: 'api', redact: ['pin'] });
  expect(stripped.status).toBeLessThan(300);
  expect(stripped.body.redact).toEqual(['password', 'pin']);
  expect((await http.post('/v1/conversations', agent, { id: 'strip-1' })).status).toBe(201);
  const r = await http.post('/v1/conversations/strip-1/tool-calls', agent, {
    toolCalls: [{ toolName: 'call_api', arguments: { password: SENTINEL, pin: SENTINEL } }],
  });
  expect(JSON.stringify(r.body)).not.toContain(SENTINEL);
  // An admin may narrow it.
  const narrowed = await http.put('/v1/tools/call_api', admin, { description: 'api', redact: ['pin'] });
  expect(narrowed.body.redact).toEqual(['pin']);
});

it('masks a secret a person types into an edit, even when the call as proposed held none', async () => {
  expect((await http.put('/v1/tools/login', admin, { description: 'login', redact: ['password'] })).status).toBe(201);
  expect(
    (await http.put('/v1/policy', admin, { rules: [{ match: 'login', level: 'confirm', approvers: ['approver'] }] }))
      .status,
  ).toBe(200);
  expect((await http.post('/v1/conversations', agent, { id: 'typed-1' })).status).toBe(201);
  const r = await http.post('/v1/conversations/typed-1/tool-calls', agent, {
    toolCalls: [{ toolName: 'login', arguments: { user: 'bob' } }],
  });
  const id = r.body.toolCalls[0].id;
  const decided = await http.post(`/v1/tool-calls/${id}/decision`, ann, {
    decision: 'approve',
    arguments: { user: 'bob', password: SENTINEL },
  });
  expect(decided.status).toBe(200);
  expect(JSON.stringify(decided.body)).not.toContain(SENTINEL);
  expect(decided.body.decision.editedArguments.password).toMatch(/^\[redacted:hmac-[0-9a-f]{12}\]$/);
  const audit = await http.get('/v1/audit/events?conversationId=typed-1', admin);
  expect(JSON.stringify(audit.body)).not.toContain(SENTINEL);
  // The claim runs with what the person typed.
  const claim = await http.post(`/v1/tool-calls/${id}/execution`, agent, {});
  expect(claim.body.arguments).toEqual({ user: 'bob', password: SENTINEL });
});
