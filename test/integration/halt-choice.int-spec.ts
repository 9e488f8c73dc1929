/**
 * Which halt a proposal or a claim meets, against a real database: the SQL only narrows the tenant's halts to those
 * that may cover the conversation, and the domain's `haltThatApplies` picks the widest. Every read that brings
 * halts (the halt repository's `covering`, the policy inputs alone and beside the conversation, the sweep of
 * questions left pending under a halt) answers the same.
 */
import {
  CONVERSATIONS,
  ConversationRepository,
  HALTS,
  HaltRepository,
  POLICY_INPUTS,
  PolicyInputsReader,
  UNIT_OF_WORK,
  UnitOfWork,
} from '../../src/application/ports';
import { QUESTIONS, QuestionRepository } from '../../src/application/ports/question.port';
import { Conversation } from '../../src/domain/conversation/conversation.aggregate';
import { Question } from '../../src/domain/question/question.aggregate';
import { startTestServer, TestServer } from '../support/server';

const TENANT = 't-halt-choice';
const AGENT = 'bot';
const CONVERSATION = 'conv-halts';
const place = { agentId: AGENT, conversationId: CONVERSATION, toolNames: ['get_x'] };

let server: TestServer;
let halts: HaltRepository;
let inputs: PolicyInputsReader;
let uow: UnitOfWork;
let questions: QuestionRepository;
const QUESTION = 'q-under-halts';

beforeAll(async () => {
  // No sweeper: it would cancel the pending question the test reads under the halts.
  server = await startTestServer({ sweepIntervalMs: 0 });
  halts = server.app.get(HALTS);
  inputs = server.app.get(POLICY_INPUTS);
  uow = server.app.get(UNIT_OF_WORK);
  questions = server.app.get(QUESTIONS);
  const conversations: ConversationRepository = server.app.get(CONVERSATIONS);
  await uow.run(() =>
    conversations.save(Conversation.start({ id: CONVERSATION, tenantId: TENANT, agentId: AGENT, at: new Date() })),
  );
  await uow.run(() =>
    questions.save(
      Question.ask({
        id: QUESTION,
        tenantId: TENANT,
        conversationId: CONVERSATION,
        agentId: AGENT,
        userId: 'ann',
        question: { text: 'Which customer?' },
        by: { id: AGENT, kind: 'agent', via: 'api' },
        at: new Date(),
      }),
    ),
  );
});

afterAll(async () => {
  await server?.stop();
});

/** Halts of this tenant and of another one, which may cover the conversation or not. */
const HALTS_IN_STORE = {
  tenant: { tenant: TENANT, scope: 'tenant', id: '', reason: 'tenant-wide incident' },
  agent: { tenant: TENANT, scope: 'agent', id: AGENT, reason: 'runaway bot' },
  conversation: { tenant: TENANT, scope: 'conversation', id: CONVERSATION, reason: 'wrong customer' },
  otherAgent: { tenant: TENANT, scope: 'agent', id: 'other-bot', reason: 'another bot' },
  otherConversation: { tenant: TENANT, scope: 'conversation', id: 'conv-other', reason: 'another conversation' },
  otherTenant: { tenant: 't-other', scope: 'tenant', id: '', reason: 'another tenant' },
} as const;
type Name = keyof typeof HALTS_IN_STORE;
const NAMES = Object.keys(HALTS_IN_STORE) as Name[];

async function storeOnly(names: Name[]): Promise<void> {
  await server.dataSource.query(`DELETE FROM halts WHERE tenant_id IN ($1, 't-other')`, [TENANT]);
  for (const n of names) {
    const h = HALTS_IN_STORE[n];
    await server.dataSource.query(
      `INSERT INTO halts (tenant_id, scope, scope_id, reason, created_by, created_at) VALUES ($1, $2, $3, $4, $5, now())`,
      [h.tenant, h.scope, h.id, h.reason, JSON.stringify({ id: 'root', via: 'cli' })],
    );
  }
}

/** The answer the SQL gave before the choice moved to the domain: ORDER BY tenant, agent, conversation LIMIT 1. */
function widestCovering(names: Name[]): { scope: string; reason: string } | null {
  const first = (['tenant', 'agent', 'conversation'] as const).find((n) => names.includes(n));
  return first ? { scope: HALTS_IN_STORE[first].scope, reason: HALTS_IN_STORE[first].reason } : null;
}

describe('the halt that applies to a conversation', () => {
  // Every combination of the six halts: 64 stores.
  const stores = Array.from({ length: 1 << NAMES.length }, (_, bits) => NAMES.filter((_, i) => bits & (1 << i)));

  it('is the widest covering one, whichever read brings it', async () => {
    for (const names of stores) {
      await storeOnly(names);
      const want = widestCovering(names);
      const got = {
        covering: await halts.covering(TENANT, AGENT, CONVERSATION),
        forProposal: (await inputs.forProposal(TENANT, place)).halt,
        withConversation: (await inputs.withConversation(TENANT, CONVERSATION, {}, place.toolNames))?.inputs.halt,
        // Inside a unit of work the inputs are read after the conversation, in a statement of their own.
        // The sweep's one entry for the question, cancelled with the reason of the halt that applies.
        questionSweep: await questions.findPendingUnderHalt(100),
        inUnitOfWork: await uow.run(
          async () =>
            (await inputs.withConversation(TENANT, CONVERSATION, { lock: true }, place.toolNames))?.inputs.halt,
        ),
      };
      expect({ names, ...got }).toEqual({
        names,
        covering: want,
        forProposal: want,
        withConversation: want,
        questionSweep: want ? [{ tenantId: TENANT, id: QUESTION, reason: want.reason }] : [],
        inUnitOfWork: want,
      });
    }
  });
});
