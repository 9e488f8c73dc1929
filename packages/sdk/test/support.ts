/** What the SDK's end-to-end tests share: the real server, tokens, a policy, and a person who decides. */
import {
  Tollgate,
  type Approval,
  type FetchLike,
  type TollgateConversation,
  type TollgateOptions,
} from '@tollgate/sdk';
import { startTestServer, type TestServer } from '../../../test/support/server.js';
import { SoftAuthenticator } from '../../../test/support/soft-authenticator.js';
import { until } from '../../../test/support/wait.js';

export { SoftAuthenticator, startTestServer, until, type TestServer };

/** The policy the tests run under: reads run, `shell rm` is denied, deletions wait for an admin, `flash` expires in 1 s. */
export const POLICY = {
  rules: [
    { match: 'get_*', level: 'automatic' as const },
    { match: 'shell(cmd=rm *)', level: 'deny' as const },
    { match: 'delete_source', level: 'confirm' as const, approvers: ['admin' as const] },
    { match: 'flash', level: 'confirm' as const, timeoutSeconds: 1 },
    { match: 'send_email', level: 'confirm' as const },
  ],
};

/** POLICY, and `wire_money`, which a person approves only with their passkey (`stepUp: passkey`). */
export const PASSKEY_POLICY = {
  rules: [{ match: 'wire_money', level: 'confirm' as const, stepUp: 'passkey' as const }, ...POLICY.rules],
};

/**
 * A software authenticator holding a first passkey of the client's person, registered through the SDK. WebAuthn
 * refuses IP-address origins: without TOLLGATE_PUBLIC_URL the relying party is http://localhost:PORT.
 */
export async function registerPasskey(server: TestServer, person: Tollgate): Promise<SoftAuthenticator> {
  const key = new SoftAuthenticator(`http://localhost:${new URL(server.url).port}`);
  const options = await person.passkeys.registrationOptions();
  await person.passkeys.register({ response: key.register(options.publicKey) });
  return key;
}

/** Fast retries, so outages in tests cost little time (the delays themselves are not asserted). */
export const FAST_RETRY = { initialDelayMs: 20, maxDelayMs: 200, maxAttempts: 50 };

/** Starts a server and its setup before the file's tests, and stops it after them. */
export function withServer(ready: (server: TestServer, setup: Setup) => void): void {
  let server: TestServer | undefined;
  beforeAll(async () => {
    server = await startTestServer();
    ready(server, await setUp(server));
  });
  afterAll(async () => {
    await server?.stop();
  });
}

export interface Setup {
  server: TestServer;
  agentToken: string;
  annToken: string;
  /** The agent's client. */
  agent(o?: Partial<TollgateOptions>): Tollgate;
  /** Ann, an admin, deciding from "the CLI". */
  ann: Tollgate;
}

export async function setUp(server: TestServer): Promise<Setup> {
  const agentToken = await server.token('support-bot', ['agent'], { name: 'Support bot' });
  const annToken = await server.token('ann', ['admin'], { name: 'Ann' });
  const ann = new Tollgate({ url: server.url, token: annToken, channel: 'cli' });
  await ann.putPolicy(POLICY);
  return {
    server,
    agentToken,
    annToken,
    agent: (o = {}) => new Tollgate({ url: server.url, token: agentToken, retry: FAST_RETRY, ...o }),
    ann,
  };
}

/** Waits until a call of `conversationId` asks for a person, as an approver sees it in the inbox. */
export async function pendingIn(ann: Tollgate, conversationId: string, count = 1): Promise<Approval[]> {
  let found: Approval[] = [];
  await until(
    async () => (found = (await ann.inbox().all()).filter((a) => a.conversationId === conversationId)).length >= count,
    20_000,
    `${count} pending call(s) in ${conversationId}`,
  );
  return found;
}

/** A fetch that passes everything through to the real one, letting `intercept` act on each request first. */
export function tapFetch(
  intercept: (url: string, init: RequestInit, real: FetchLike) => Promise<Response | undefined> | undefined,
): FetchLike & { calls: Array<{ url: string; method: string; headers: Record<string, string> }> } {
  const calls: Array<{ url: string; method: string; headers: Record<string, string> }> = [];
  const real: FetchLike = (u, i) => fetch(u, i);
  const f = (async (url: string, init: RequestInit) => {
    calls.push({ url, method: init.method ?? 'GET', headers: { ...(init.headers as Record<string, string>) } });
    return (await intercept(url, init, real)) ?? real(url, init);
  }) as FetchLike & { calls: typeof calls };
  f.calls = calls;
  return f;
}

/** What undici throws when a connection fails mid-request. */
export function socketError(): TypeError {
  return Object.assign(new TypeError('fetch failed'), {
    cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
  });
}

/** A factory of fresh conversations of the agent for Ann (`${prefix}-1`, `-2`, …), one per test. */
export function conversations(setup: () => Setup, prefix: string): () => Promise<TollgateConversation> {
  let n = 0;
  return () => {
    n += 1;
    return setup()
      .agent()
      .conversation({
        id: `${prefix}-${n}`,
        user: { id: 'ann', roles: ['admin'], name: 'Ann' },
        title: `${prefix} test ${n}`,
      });
  };
}

/** What each examples/<framework>/agent.mjs exports: its main, run with a URL and token, and the sources it holds. */
interface Example {
  main(o: { url: string; token: string; conversationId: string; log: (line: unknown) => void }): Promise<string>;
  sources: Map<string, string>;
}

/**
 * The tests every shipped example passes, run in process (its main, with a URL and token), decided as a person
 * would in the inbox: an approval with edited arguments, and a rejection whose reason the model repeats.
 */
export function describeExample(dir: string, setup: () => Setup): void {
  describe(`examples/${dir}/agent.mjs`, () => {
    const example = require(`../../../examples/${dir}/agent.mjs`) as Example;

    it('deletes what the approver edited it to, and the model repeats the result', async () => {
      const s = setup();
      const lines: unknown[] = [];
      const running = example.main({
        url: s.server.url,
        token: s.agentToken,
        conversationId: `example-${dir}-approve`,
        log: (l) => lines.push(l),
      });
      const [pending] = await pendingIn(s.ann, `example-${dir}-approve`);
      expect(pending).toMatchObject({
        toolName: 'delete_source',
        arguments: { id: 'src_2' },
        display: { title: 'Delete source src_2' },
        policy: { level: 'confirm' },
      });
      await s.ann.inbox().approve(pending.id, { arguments: { id: 'src_3' } });
      expect(await running).toBe('The tool said: {"deleted":"src_3","existed":true}');
      expect([...example.sources.keys()]).toEqual(['src_1', 'src_2']);
      expect(lines.at(-1)).toBe('The tool said: {"deleted":"src_3","existed":true}');
    });

    it('tells the model the reason when the approver rejects it', async () => {
      const s = setup();
      const running = example.main({
        url: s.server.url,
        token: s.agentToken,
        conversationId: `example-${dir}-reject`,
        log: () => undefined,
      });
      const [pending] = await pendingIn(s.ann, `example-${dir}-reject`);
      await s.ann.inbox().reject(pending.id, { reason: 'keep it for the audit' });
      expect(await running).toBe('The tool said: delete_source was rejected by Ann via cli: keep it for the audit');
    });
  });
}
