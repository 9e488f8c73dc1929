import { Tollgate, TollgateError } from '@tollgate/sdk';
import { client } from '../support/http';
import { TollgateGrpc } from '../support/grpc';
import { startTestServer, TestServer } from '../support/server';

/**
 * GET /v1/me and gRPC GetMe: who a token is, as Tollgate counts it. Programs that act for a person (the MCP
 * gateway) rely on it to keep tenants apart and to check a configured person's token, so it must tell the
 * tenant and the roles the server enforces, not what the token merely claims.
 */

let server: TestServer;
let http: ReturnType<typeof client>;
let rpc: TollgateGrpc;

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
  rpc = new TollgateGrpc(server.grpcAddress!);
});

afterAll(async () => {
  rpc?.close();
  await server?.stop();
});

describe('GET /v1/me', () => {
  it("answers a person's id, tenant, name, email and roles", async () => {
    const ann = await server.token('ann', ['approver', 'admin'], {
      tenant: 'acme',
      name: 'Ann',
      email: 'ann@example.com',
    });
    const me = await http.get('/v1/me', ann);
    expect(me.status).toBe(200);
    expect(me.body).toEqual({
      id: 'ann',
      tenant: 'acme',
      kind: 'person',
      name: 'Ann',
      email: 'ann@example.com',
      roles: ['approver', 'admin'],
      owner: null,
    });
  });

  it('answers an agent as an agent only, whatever other roles its token claims', async () => {
    const bot = await server.token('bot', ['agent', 'admin'], { owner: 'ann' });
    expect((await http.get('/v1/me', bot)).body).toEqual({
      id: 'bot',
      tenant: 'default',
      kind: 'agent',
      name: null,
      email: null,
      roles: ['agent'],
      owner: 'ann',
    });
  });

  it('leaves out an email claim that is not an address', async () => {
    const odd = await server.token('odd', [], { email: 'not an address' });
    expect((await http.get('/v1/me', odd)).body).toMatchObject({ id: 'odd', email: null, roles: [] });
  });

  it('needs a valid token', async () => {
    expect((await http.get('/v1/me')).body.code).toBe('unauthenticated');
    expect((await http.get('/v1/me', 'eyJhbGciOiJIUzI1NiJ9.e30.forged')).status).toBe(401);
  });

  it("is what the SDK's me() answers", async () => {
    const tg = new Tollgate({ url: server.url, token: await server.token('carol', ['auditor'], { tenant: 't2' }) });
    expect(await tg.me()).toMatchObject({ id: 'carol', tenant: 't2', kind: 'person', roles: ['auditor'] });
    const anonymous = new Tollgate({ url: server.url, token: 'not-a-token', retry: { maxAttempts: 1 } });
    await expect(anonymous.me()).rejects.toMatchObject({
      status: 401,
      code: 'unauthenticated',
    } satisfies Partial<TollgateError>);
  });
});

describe('gRPC GetMe', () => {
  it('answers as REST does', async () => {
    const ann = await server.token('ann', ['approver'], { tenant: 'acme', name: 'Ann', email: 'ann@example.com' });
    expect(await rpc.call('GetMe', {}, ann)).toMatchObject({
      id: 'ann',
      tenant: 'acme',
      kind: 'PRINCIPAL_KIND_PERSON',
      name: 'Ann',
      email: 'ann@example.com',
      roles: ['approver'],
    });
    const bot = await server.token('bot', ['agent', 'approver']);
    expect(await rpc.call('GetMe', {}, bot)).toMatchObject({
      id: 'bot',
      kind: 'PRINCIPAL_KIND_AGENT',
      roles: ['agent'],
    });
  });

  it('needs a valid token', async () => {
    expect((await rpc.failure('GetMe', {})).code).toBe(16); // UNAUTHENTICATED
  });
});
