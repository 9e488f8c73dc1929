/**
 * ProposeToolCallsHandler with `results` (results of earlier calls carried by the next proposal), against the
 * in-memory fakes of the ports as in handlers.spec.ts: real aggregates, a real ApprovalPolicy, no database.
 * The results are recorded first, in the proposal's transaction; a refused one (or a refused proposal) writes
 * nothing; the same request retried records nothing twice.
 */
import { FakeReceiptSigner, inMemoryPorts } from '../../../../test/support/in-memory-ports';
import type { ProposedCall } from '../../../domain/conversation/conversation.aggregate';
import type { Actor, Principal } from '../../../domain/shared/actor';
import { RepositoryPolicyInputs } from '../../policy-inputs/repository-policy-inputs';
import { ClaimExecutionCommand } from '../claim-execution/claim-execution.command';
import { ClaimExecutionHandler } from '../claim-execution/claim-execution.handler';
import { HaltCommand } from '../halt/halt.command';
import { HaltHandler } from '../halt/halt.handler';
import { PutPolicyCommand } from '../put-policy/put-policy.command';
import { PutPolicyHandler } from '../put-policy/put-policy.handler';
import { ReportResultCommand } from '../report-result/report-result.command';
import { ReportResultHandler } from '../report-result/report-result.handler';
import { StartConversationCommand } from '../start-conversation/start-conversation.command';
import { StartConversationHandler } from '../start-conversation/start-conversation.handler';
import { CarriedResult, ProposeToolCallsCommand } from './propose-tool-calls.command';
import { ProposeToolCallsHandler } from './propose-tool-calls.handler';

const T0 = new Date('2025-03-01T12:00:00.000Z');
const iso = (seconds: number) => new Date(T0.getTime() + seconds * 1000).toISOString();
const TENANT = 't1';

const agent: Principal = { id: 'agent-1', tenant: TENANT, roles: ['agent'], name: 'Deploy bot' };
const root: Principal = { id: 'root', tenant: TENANT, roles: ['admin'], name: 'Root' };
const rootActor: Actor = { id: 'root', kind: 'person', via: 'api', name: 'Root', roles: ['admin'] };

/** `get_*` run at once; anything else waits for a person. */
const POLICY = {
  defaults: { unknownTools: 'confirm', timeoutSeconds: 300, approvers: ['approver', 'admin'] },
  rules: [{ match: 'get_*', level: 'automatic' }],
};

function call(toolName: string, args: Record<string, unknown>, externalId: string): ProposedCall {
  return { toolName, arguments: args, externalId };
}

async function setup() {
  const ports = inMemoryPorts(T0);
  const { uow, conversations, tools, policies, grants, halts, clock, ids, receipts } = ports;
  /** The types of each commit's events, one list per commit. */
  const commits: string[][] = [];
  uow.afterCommit((events) => commits.push(events.map((e) => e.type)));
  const h = {
    start: new StartConversationHandler(uow, conversations, clock, ids),
    propose: new ProposeToolCallsHandler(
      uow,
      conversations,
      new RepositoryPolicyInputs(policies, tools, grants, halts, conversations),
      clock,
      ids,
      receipts,
    ),
    claim: new ClaimExecutionHandler(uow, conversations, halts, receipts, clock),
    report: new ReportResultHandler(uow, conversations, clock),
    halt: new HaltHandler(uow, halts, conversations, clock),
  };
  await new PutPolicyHandler(uow, policies, clock).execute(new PutPolicyCommand(TENANT, rootActor, POLICY));
  const start = async (id: string) =>
    (await h.start.execute(new StartConversationCommand(agent, { id, title: 'Clean-up' }))).conversation.id;
  const conv = await start('conv-1');
  const t = {
    ...ports,
    h,
    commits,
    conv,
    start,
    /** A proposal with claim, carrying `results`. */
    step: (calls: ProposedCall[], results: CarriedResult[] = [], claimKey?: string, conversationId = conv) =>
      h.propose.execute(new ProposeToolCallsCommand(agent, conversationId, calls, true, claimKey, results)),
    /** The calls the conversation holds, as stored. */
    async stored(conversationId = conv) {
      return (await conversations.findWithCalls(TENANT, conversationId))!.toolCalls;
    },
    async status(toolCallId: string, conversationId = conv) {
      return (await t.stored(conversationId)).find((c) => c.id === toolCallId)?.status;
    },
  };
  return t;
}

/** One auto-approved call proposed and claimed in one step (`executed`), at T0. */
async function executedCall(t: Awaited<ReturnType<typeof setup>>, externalId = 'c1', conversationId = t.conv) {
  const { toolCalls } = await t.step(
    [call('get_source', { id: externalId }, externalId)],
    [],
    undefined,
    conversationId,
  );
  expect(toolCalls[0].status).toBe('executed');
  return toolCalls[0].id;
}

describe('ProposeToolCallsHandler with results', () => {
  it('records the results first, then the proposal, in one commit: ToolCallCompleted before ToolCallProposed', async () => {
    const t = await setup();
    const first = await executedCall(t, 'c1');
    t.clock.advance(2_000);
    const mark = t.uow.mark();
    const commits = t.commits.length;
    const answer = await t.step(
      [call('get_report', { id: 'r' }, 'c2')],
      [{ toolCallId: first, outcome: 'succeeded', output: { rows: 3 } }],
    );
    expect(answer.toolCalls[0]).toMatchObject({ externalId: 'c2', status: 'executed' });
    expect(answer.claims).toEqual([
      { toolCallId: answer.toolCalls[0].id, arguments: { id: 'r' }, receipt: expect.any(String) },
    ]);
    expect(t.commits.slice(commits)).toEqual([
      ['ToolCallCompleted', 'ToolCallProposed', 'ToolCallAutoApproved', 'ToolCallExecuted'],
    ]);
    const [completed] = t.uow.since(mark);
    expect(completed).toMatchObject({
      toolCallId: first,
      actor: { id: 'agent-1', kind: 'agent' },
      data: { outcome: 'succeeded', durationMs: 2_000 },
    });
    const stored = (await t.stored()).find((c) => c.id === first)!;
    expect(stored).toMatchObject({ status: 'completed', result: { outcome: 'succeeded', output: { rows: 3 } } });
    expect(stored.result!.at.toISOString()).toBe(iso(2));
  });

  it('records several results in the order sent, a failure with its error', async () => {
    const t = await setup();
    const a = await executedCall(t, 'a');
    const b = await executedCall(t, 'b');
    const mark = t.uow.mark();
    await t.step(
      [call('get_report', {}, 'c')],
      [
        { toolCallId: b, outcome: 'failed', error: 'timeout' },
        { toolCallId: a, outcome: 'succeeded' },
      ],
    );
    expect(
      t.uow
        .since(mark)
        .filter((e) => e.type === 'ToolCallCompleted')
        .map((e) => [e.toolCallId, e.data]),
    ).toEqual([
      [b, expect.objectContaining({ outcome: 'failed', error: 'timeout' })],
      [a, expect.objectContaining({ outcome: 'succeeded' })],
    ]);
    expect([await t.status(a), await t.status(b)]).toEqual(['completed', 'completed']);
  });

  it('a refused result refuses the whole request: the results before it and the proposal are not written', async () => {
    const t = await setup();
    const done = await executedCall(t, 'c1');
    // A call still waiting for a person: its result is refused (not_executed).
    const { toolCalls: held } = await t.step([call('deploy_app', {}, 'd1')]);
    expect(held[0].status).toBe('pending');
    const mark = t.uow.mark();
    const calls = (await t.stored()).length;
    await expect(
      t.step(
        [call('get_report', {}, 'c2')],
        [
          { toolCallId: done, outcome: 'succeeded' },
          { toolCallId: held[0].id, outcome: 'succeeded' },
        ],
      ),
    ).rejects.toMatchObject({ code: 'not_executed' });
    expect(t.uow.types(mark)).toEqual([]);
    expect(await t.status(done)).toBe('executed');
    expect(await t.stored()).toHaveLength(calls);
    expect((await t.stored()).some((c) => c.externalId === 'c2')).toBe(false);
    expect(t.receipts.signed).toHaveLength(1); // the first step's claim only
  });

  it('a result different from the one recorded refuses the request (already_completed) and writes nothing', async () => {
    const t = await setup();
    const done = await executedCall(t, 'c1');
    await t.h.report.execute(new ReportResultCommand(agent, done, { outcome: 'succeeded', output: { n: 1 } }));
    const mark = t.uow.mark();
    await expect(
      t.step([call('get_report', {}, 'c2')], [{ toolCallId: done, outcome: 'succeeded', output: { n: 2 } }]),
    ).rejects.toMatchObject({ code: 'already_completed' });
    expect(t.uow.types(mark)).toEqual([]);
    expect((await t.stored()).some((c) => c.externalId === 'c2')).toBe(false);
  });

  it('a proposal refused after its results were taken writes none of them (conversation_blocked)', async () => {
    const t = await setup();
    const done = await executedCall(t, 'c1');
    await t.step([call('deploy_app', {}, 'd1')]); // pending: a new call is refused until it is decided
    const mark = t.uow.mark();
    await expect(
      t.step([call('get_report', {}, 'c2')], [{ toolCallId: done, outcome: 'succeeded' }]),
    ).rejects.toMatchObject({ code: 'conversation_blocked' });
    expect(t.uow.types(mark)).toEqual([]);
    expect(await t.status(done)).toBe('executed');
  });

  it('the same request retried (same ids, same claimKey) is answered the same claims and records nothing twice', async () => {
    const t = await setup();
    const done = await executedCall(t, 'c1');
    const send = () =>
      t.step(
        [call('get_report', { id: 'r' }, 'c2')],
        [{ toolCallId: done, outcome: 'succeeded', output: { a: 1, b: [1, 2] } }],
        'k-2',
      );
    const first = await send();
    expect(first.replay).toBe(false);
    t.clock.advance(1_000);
    const mark = t.uow.mark();
    const again = await send();
    expect(again).toMatchObject({ replay: true, toolCalls: [{ id: first.toolCalls[0].id, status: 'executed' }] });
    expect(again.claims).toEqual(first.claims);
    const jti = (r: string) => (FakeReceiptSigner.claims(r) as unknown as { jti: string }).jti;
    expect(jti(again.claims![0].receipt)).toBe(jti(first.claims![0].receipt));
    expect(t.uow.types(mark)).toEqual([]);
    expect(t.uow.types().filter((type) => type === 'ToolCallCompleted')).toHaveLength(1);
    expect((await t.stored()).find((c) => c.id === done)!.result!.at.toISOString()).toBe(iso(0));
  });

  it('a result sent first with a replayed proposal is recorded though the proposal itself changes nothing', async () => {
    const t = await setup();
    const done = await executedCall(t, 'c1');
    const step = [call('get_report', {}, 'c2')];
    await t.step(step, [], 'k-2');
    const mark = t.uow.mark();
    const again = await t.step(step, [{ toolCallId: done, outcome: 'succeeded' }], 'k-2');
    expect(again.replay).toBe(true);
    expect(t.uow.types(mark)).toEqual(['ToolCallCompleted']);
    expect(await t.status(done)).toBe('completed');
  });

  it('a result already recorded by the result endpoint, sent again the same, is taken as recorded', async () => {
    const t = await setup();
    const done = await executedCall(t, 'c1');
    await t.h.report.execute(new ReportResultCommand(agent, done, { outcome: 'failed', error: 'boom' }));
    const mark = t.uow.mark();
    const answer = await t.step(
      [call('get_report', {}, 'c2')],
      [{ toolCallId: done, outcome: 'failed', error: 'boom' }],
    );
    expect(answer.toolCalls[0].status).toBe('executed');
    expect(t.uow.types(mark)).toEqual(['ToolCallProposed', 'ToolCallAutoApproved', 'ToolCallExecuted']);
  });

  it('a result for a call of another conversation of the same agent is refused as not_found, and nothing is written', async () => {
    const t = await setup();
    const other = await t.start('conv-2');
    const elsewhere = await executedCall(t, 'x1', other);
    const mark = t.uow.mark();
    await expect(
      t.step([call('get_report', {}, 'c2')], [{ toolCallId: elsewhere, outcome: 'succeeded' }]),
    ).rejects.toMatchObject({ code: 'not_found' });
    await expect(
      t.step([call('get_report', {}, 'c2')], [{ toolCallId: 'tc_nope', outcome: 'succeeded' }]),
    ).rejects.toMatchObject({ code: 'not_found' });
    expect(t.uow.types(mark)).toEqual([]);
    expect(await t.status(elsewhere, other)).toBe('executed');
    expect(await t.stored()).toHaveLength(0);
  });

  it('under a halt the result is taken with a replayed proposal; a new call is refused (halted) and takes the result with it', async () => {
    const t = await setup();
    const done = await executedCall(t, 'c1');
    await t.h.halt.execute(new HaltCommand(root, { scope: 'conversation', id: t.conv }, 'incident'));
    const mark = t.uow.mark();
    await expect(
      t.step([call('get_report', {}, 'c2')], [{ toolCallId: done, outcome: 'succeeded' }]),
    ).rejects.toMatchObject({ code: 'halted' });
    expect(t.uow.types(mark)).toEqual([]);
    const replayed = await t.step(
      [call('get_source', { id: 'c1' }, 'c1')],
      [{ toolCallId: done, outcome: 'succeeded' }],
    );
    expect(replayed).toMatchObject({ replay: true, claims: [] });
    expect(t.uow.types(mark)).toEqual(['ToolCallCompleted']);
    expect(await t.status(done)).toBe('completed');
  });
});
