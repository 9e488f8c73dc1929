/**
 * "Ask a human" from the SDK against the real server: `conv.ask` waits for the answer a person gives with
 * `tollgate.answer`, resolves expired and cancelled outcomes, rides out network failures while it waits, asks
 * once however often it retries, and its types mirror the OpenAPI document's schemas.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import * as ts from 'typescript';
import { Tollgate, TollgateError, type Question, type TollgateConversation } from '@tollgate/sdk';
import { setUp, socketError, startTestServer, tapFetch, until, type Setup, type TestServer } from './support.js';

let server: TestServer;
let s: Setup;
let bob: Tollgate;

beforeAll(async () => {
  server = await startTestServer({ sweepIntervalMs: 100 });
  s = await setUp(server);
  bob = new Tollgate({
    url: server.url,
    token: await server.token('bob', ['approver'], { name: 'Bob' }),
    channel: 'web',
  });
});

afterAll(async () => {
  await server?.stop();
});

let n = 0;
function conversation(agent = s.agent()): Promise<TollgateConversation> {
  n += 1;
  return agent.conversation({ id: `conv-ask-${n}`, user: { id: 'ann', name: 'Ann' } });
}

/** The one pending question of a conversation, as an approver's inbox shows it. */
async function pendingQuestion(conversationId: string): Promise<Question> {
  let found: Question[] = [];
  await until(
    async () =>
      (found = (await bob.questions.pending()).items.filter((q) => q.conversationId === conversationId)).length > 0,
    20_000,
    `a question in ${conversationId}`,
  );
  expect(found).toHaveLength(1);
  return found[0];
}

describe('conv.ask', () => {
  it('resolves with the answer and who gave it', async () => {
    const conv = await conversation();
    const asked = conv.ask('EU or US?', { choices: ['EU', 'US'], timeoutSeconds: 600 });
    const q = await pendingQuestion(conv.id);
    expect(q).toMatchObject({
      text: 'EU or US?',
      choices: ['EU', 'US'],
      allowFreeText: false,
      status: 'pending',
      timeoutSeconds: 600,
    });
    const answered = await bob.answer(q.id, 'US');
    expect(answered.status).toBe('answered');
    await expect(asked).resolves.toMatchObject({
      status: 'answered',
      answer: 'US',
      by: { id: 'bob', name: 'Bob', via: 'web' },
      question: { id: q.id },
    });
  });

  it('the first answer wins: a later one throws already_answered; the same one again is taken', async () => {
    const conv = await conversation();
    const asked = conv.ask('Bill which account?');
    const q = await pendingQuestion(conv.id);
    await bob.answer(q.id, 'acme');
    await expect(bob.answer(q.id, 'acme')).resolves.toMatchObject({ answer: { text: 'acme' } });
    const root = new Tollgate({ url: server.url, token: s.annToken });
    await expect(root.answer(q.id, 'globex')).rejects.toMatchObject({
      status: 409,
      code: 'already_answered',
      problem: { questionStatus: 'answered' },
    });
    await expect(asked).resolves.toMatchObject({ status: 'answered', answer: 'acme' });
  });

  it('resolves expired when nobody answers in time', async () => {
    const conv = await conversation();
    await expect(conv.ask('Anyone?', { timeoutSeconds: 1 })).resolves.toMatchObject({
      status: 'expired',
      question: { status: 'expired' },
    });
  });

  it('resolves cancelled when a halt covers the conversation, and a new ask then throws halted', async () => {
    const conv = await conversation();
    const asked = conv.ask('Still there?');
    await pendingQuestion(conv.id);
    const admin = new Tollgate({ url: server.url, token: s.annToken });
    await admin.halt({ scope: 'conversation', id: conv.id, reason: 'drill' });
    await expect(asked).resolves.toMatchObject({ status: 'cancelled', question: { reason: 'drill' } });
    await expect(conv.ask('Again?')).rejects.toMatchObject({ status: 503, code: 'halted' });
    await admin.resume({ scope: 'conversation', id: conv.id });
  });

  it('throws a validation problem naming the field', async () => {
    const conv = await conversation();
    const e = await conv.ask('Pick', { choices: ['one'] }).catch((x) => x);
    expect(e).toBeInstanceOf(TollgateError);
    expect(e).toMatchObject({ status: 400, code: 'validation_failed', problem: { errors: [{ path: 'choices' }] } });
  });

  it('asks once when its request is lost and retried, and keeps waiting through network failures', async () => {
    let lostAsk = false;
    let failedPolls = 0;
    const fetch = tapFetch(async (url, init, real) => {
      if (!lostAsk && init.method === 'POST' && url.endsWith('/questions')) {
        lostAsk = true;
        await real(url, init); // the server asks; the answer never arrives
        throw socketError();
      }
      if (/\/v1\/questions\/q_[^/?]+\?wait=/.test(url) && failedPolls < 2) {
        failedPolls += 1;
        throw socketError();
      }
      return undefined;
    });
    const conv = await conversation(s.agent({ fetch }));
    const asked = conv.ask('Retry-proof?', { id: 'framework:call/1' });
    const q = await pendingQuestion(conv.id);
    expect(q.externalId).toMatch(/^x_[0-9a-f]{64}$/); // an id the API would refuse, hashed the same every time
    // Answer only once the SDK is waiting (its retried ask answered, two polls lost): answered sooner, the retried
    // ask would already carry the answer and the waiting this test is about would not happen.
    while (failedPolls < 2) await new Promise((r) => setTimeout(r, 20));
    await bob.answer(q.id, 'yes');
    await expect(asked).resolves.toMatchObject({ status: 'answered', answer: 'yes' });
    expect(failedPolls).toBe(2);
    expect(fetch.calls.filter((c) => c.method === 'POST' && c.url.endsWith('/questions'))).toHaveLength(2);
  });

  it('stops waiting when its signal aborts', async () => {
    const conv = await conversation();
    const controller = new AbortController();
    const asked = conv.ask('Wait for me?', { signal: controller.signal });
    await pendingQuestion(conv.id);
    controller.abort(new Error('gave up'));
    await expect(asked).rejects.toThrow('gave up');
  });
});

describe('the question types against the OpenAPI document', () => {
  it('mirror the Question, QuestionAnswer and QuestionPage schemas member for member', async () => {
    const ROOT = join(__dirname, '..', '..', '..');
    const work = mkdtempSync(join(tmpdir(), 'tollgate-sdk-questions-'));
    try {
      writeFileSync(
        join(work, 'openapi.json'),
        JSON.stringify(await (await fetch(`${server.url}/openapi.json`)).json()),
      );
      const generate = [
        'const { default: openapiTS, astToString } = await import(process.argv[1]);',
        "const { readFileSync, writeFileSync } = await import('node:fs');",
        "writeFileSync(process.argv[3], astToString(await openapiTS(JSON.parse(readFileSync(process.argv[2], 'utf8')), { defaultNonNullable: false })));",
      ].join('\n');
      const entry = pathToFileURL(join(ROOT, 'node_modules', 'openapi-typescript', 'dist', 'index.mjs')).href;
      await promisify(execFile)(process.execPath, [
        '--input-type=module',
        '-e',
        generate,
        entry,
        join(work, 'openapi.json'),
        join(work, 'api.ts'),
      ]);
      const lines = [
        `import type * as sdk from ${JSON.stringify(join(ROOT, 'packages', 'sdk', 'src', 'questions'))};`,
        "import type { components } from './api';",
        "type S = components['schemas'];",
        'type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;',
        'type RequiredKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T];',
        'type Mirror<A, B> = Same<A, B> extends true ? ([A] extends [object] ? (Same<keyof A, keyof B> extends true ? Same<RequiredKeys<A>, RequiredKeys<B>> : false) : true) : false;',
        "export const question: Mirror<sdk.Question, S['Question']> = true;",
        "export const answer: Mirror<NonNullable<sdk.Question['answer']>, S['QuestionAnswer']> = true;",
        "export const page: Mirror<sdk.QuestionPage, S['QuestionPage']> = true;",
        "export const status: Mirror<sdk.QuestionStatus, S['QuestionStatus']> = true;",
        "export const body: Mirror<sdk.AskQuestionRequest, NonNullable<components['schemas']['AskQuestionRequest']>> = true;",
      ];
      const file = join(work, 'mirrors.ts');
      writeFileSync(file, lines.join('\n'));
      const program = ts.createProgram([file], {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        skipLibCheck: true,
        types: [],
      });
      const diagnostics = ts
        .getPreEmitDiagnostics(program)
        .map(
          (d) =>
            `${d.file ? lines[ts.getLineAndCharacterOfPosition(d.file, d.start ?? 0).line] : '?'} → ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
        );
      expect(diagnostics).toEqual([]);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
