import { client } from '../support/http';
import { cliEnv, runCli } from '../support/pty';
import { startTestServer, TestServer } from '../support/server';

/** `tollgate questions` and `tollgate answer`, as the built bin runs them, against a real Tollgate. */
describe('tollgate questions / answer (spawned CLI)', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let ann: string;
  let bea: string;
  let agent: string;
  const as = (token: string) => cliEnv({ url: server.url, token });

  beforeAll(async () => {
    server = await startTestServer();
    api = client(server.url);
    ann = await server.token('ann', ['admin'], { name: 'Ann' });
    bea = await server.token('bea', ['approver'], { name: 'Bea' });
    agent = await server.token('bot', ['agent']);
    expect(
      (await api.post('/v1/conversations', agent, { id: 'cli-q', title: 'Quarterly billing', user: { id: 'carl' } }))
        .status,
    ).toBe(201);
  });
  afterAll(async () => {
    await server.stop();
  });

  async function ask(body: Record<string, unknown>): Promise<any> {
    const r = await api.post('/v1/conversations/cli-q/questions', agent, body);
    expect(r.status).toBe(201);
    return r.body;
  }

  it('lists the pending questions; answer records the answer via cli; a second answer is refused with exit 1', async () => {
    const region = await ask({ text: 'Proceed with the EU or the US region?', choices: ['EU', 'US'] });
    const note = await ask({ text: 'What should the invoice say?' });

    const listed = await runCli(['questions'], as(bea));
    expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: '' });
    const lines = listed.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+ASKED\s+CONVERSATION\s+QUESTION\s+CHOICES$/);
    // Newest first, with the conversation's title.
    expect(lines[1]).toMatch(
      new RegExp(
        `^${note.id}\\s+\\S+\\s+Quarterly billing \\(cli-q\\)\\s+What should the invoice say\\?\\s+free text$`,
      ),
    );
    expect(lines[2]).toMatch(
      new RegExp(
        `^${region.id}\\s+\\S+\\s+Quarterly billing \\(cli-q\\)\\s+Proceed with the EU or the US region\\?\\s+EU \\| US$`,
      ),
    );

    const answered = await runCli(['answer', note.id, 'Services', 'for', 'Q3'], as(bea));
    expect({ code: answered.code, stderr: answered.stderr, stdout: answered.stdout }).toEqual({
      code: 0,
      stderr: '',
      stdout: `${note.id} answered: "Services for Q3"\n`,
    });
    expect((await api.get(`/v1/questions/${note.id}`, ann)).body).toMatchObject({
      status: 'answered',
      answer: { text: 'Services for Q3', by: { id: 'bea', name: 'Bea', via: 'cli' } },
    });

    // The first answer wins: Ann's later one is refused, and the question keeps Bea's.
    const late = await runCli(['answer', note.id, 'Consulting'], as(ann));
    expect(late.code).toBe(1);
    expect(late.stdout).toBe('');
    expect(late.stderr.trim()).toMatch(/^already_answered: /);

    const outside = await runCli(['answer', region.id, 'Asia', '--json'], as(ann));
    expect(outside.code).toBe(1);
    expect(JSON.parse(outside.stdout)).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(outside.stderr.trim()).toMatch(/^validation_failed: /);

    const json = JSON.parse((await runCli(['questions', '--json'], as(bea))).stdout);
    expect(json.items.map((q: { id: string }) => q.id)).toEqual([region.id]);
    const all = await runCli(['questions', '--all'], as(bea));
    expect(all.stdout).toMatch(
      new RegExp(
        `${note.id}\\s+\\S+\\s+Quarterly billing \\(cli-q\\)\\s+What should the invoice say\\?\\s+answered\\s+Services for Q3 \\(Bea via cli\\)`,
      ),
    );
    expect(all.stdout).toMatch(new RegExp(`${region.id}\\s+.*\\s+pending`));
    expect((await runCli(['questions', '--status', 'expired'], as(bea))).stdout.trim()).toBe('No questions.');
  });

  it('an agent may not answer: exit 1 with forbidden', async () => {
    const q = await ask({ text: 'Agents never answer, right?' });
    const r = await runCli(['answer', q.id, 'right'], as(agent));
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(/^forbidden: /);
    expect((await api.get(`/v1/questions/${q.id}`, ann)).body.status).toBe('pending');
  });
});
