/**
 * The Python client (clients/python) against the real service: its pytest suite runs as a child process, with
 * the server's URL and tokens in its environment, and this test fails with the suite's output when it fails.
 * Decisions come from people's tokens over REST, as the web inbox makes them; agent tokens never decide.
 */
import { mintToken } from '../../src/infrastructure/auth/jwt-verifier';
import { startTestServer, TEST_SECRET, type TestServer } from '../support/server';
import { runPython, testPython } from '../support/python';

const python = testPython();
const withPython = python ? describe : describe.skip;
if (!python) console.warn('python-client.e2e-spec: no python3 on this machine, so the Python client was not tested');

withPython('the Python client', () => {
  let server: TestServer;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    // Two open waits per subject at most, so the client meets a real 429 with Retry-After; each test has its own agent.
    // Bearer tokens are for the API's audience, so that a token for the agent's application can be a user token.
    server = await startTestServer({
      maxWaitsPerToken: 2,
      auth: { secret: TEST_SECRET, audience: 'tollgate-api', userTokenAudiences: ['agent-app'], devSecret: false },
    });
    const token = (sub: string, roles: string[], name: string, audience = 'tollgate-api') =>
      mintToken(TEST_SECRET, { sub, roles, name }, '1h', { audience });
    for (let i = 1; i <= 24; i++) tokens[`agent${i}`] = await token(`py-agent-${i}`, ['agent'], `Python agent ${i}`);
    tokens.admin = await token('ann', ['admin'], 'Ann');
    tokens.approver = await token('bob', ['approver'], 'Bob');
    // The end user's own token, issued to the agent's application: start conversation's user.token.
    tokens.user_token = await token('ann', ['admin'], 'Ann', 'agent-app');
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('passes its test suite: guard, waits, edits, refusals, expiry, halt, retries, receipts, async, LangGraph, verified users', async () => {
    const { code, output } = await runPython(
      python!,
      ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'],
      { TOLLGATE_TEST_URL: server.url, TOLLGATE_TEST_TOKENS: JSON.stringify(tokens) },
      170_000,
    );
    if (code !== 0) throw new Error(`the Python client's tests failed (exit ${code}):\n${output}`);
    expect(output).toMatch(/\d+ passed/);
    expect(output).not.toMatch(/skipped|xfail|deselected/);
  }, 180_000);
});
