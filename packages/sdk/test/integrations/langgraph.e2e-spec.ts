/**
 * `@tollgate/sdk/langgraph` through a real Tollgate, with LangChain's fake chat model: the graph pauses on an
 * interrupt (MemorySaver) while Tollgate holds the call, resumes when it is decided, and the model's next call
 * shows the ToolMessage it was given.
 */
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { tool, type StructuredToolInterface } from '@langchain/core/tools';
import { z } from 'zod';
import { isTollgateInterrupt, resumeWhenDecided, withApproval } from '../../src/integrations/langgraph.js';
import { conversations, describeExample, pendingIn, type Setup, withServer, type TestServer } from '../support.js';

let server: TestServer;
let s: Setup;

withServer((started, setup) => {
  server = started;
  s = setup;
});

const conversation = conversations(() => s, 'conv-lg');

/** A graph of one agent node and a ToolNode; the model asks for `calls`, then answers with what the tools said. */
function agentGraph(
  tools: StructuredToolInterface[],
  calls: Array<{ name: string; args: Record<string, unknown>; id: string }>,
) {
  const seen: BaseMessage[][] = [];
  const model = fakeModel()
    .respondWithTools(calls)
    .respond((messages) => {
      seen.push(messages);
      return new AIMessage('done');
    });
  const bound = model.bindTools(tools);
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('agent', async (state) => ({ messages: [await bound.invoke(state.messages)] }))
    .addNode('tools', new ToolNode(tools))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', toolsCondition, ['tools', END])
    .addEdge('tools', 'agent')
    .compile({ checkpointer: new MemorySaver() });
  /** The ToolMessages' contents the model was given in its second call. */
  const toolResultsSeen = () => seen[0].filter((m) => m.getType() === 'tool').map((m) => m.content);
  return { graph, toolResultsSeen };
}

function deleteTool(runs: Array<{ id: string }>) {
  return tool(
    async (args: { id: string }) => {
      runs.push(args);
      return `deleted ${args.id}`;
    },
    { name: 'delete_source', description: 'Delete a source', schema: z.object({ id: z.string() }) },
  );
}

describe('withApproval + resumeWhenDecided (LangGraph.js)', () => {
  it('pauses on an interrupt while pending, then runs once approved; the model sees the output; one Tollgate call', async () => {
    const conv = await conversation();
    const runs: Array<{ id: string }> = [];
    const { graph, toolResultsSeen } = agentGraph(
      [withApproval(deleteTool(runs), { conversation: conv, display: (a) => ({ title: `Delete ${a.id}` }) })],
      [{ name: 'delete_source', args: { id: 'src_2' }, id: 'call_1' }],
    );
    const config = { configurable: { thread_id: conv.id } };

    const first = await graph.invoke({ messages: [{ role: 'user', content: 'delete src_2' }] }, config);
    const interrupts = (first as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__ ?? [];
    expect(interrupts.map((i) => i.value)).toEqual([
      expect.objectContaining({
        kind: 'tollgate-approval',
        conversationId: conv.id,
        toolName: 'delete_source',
        arguments: { id: 'src_2' },
      }),
    ]);
    expect(isTollgateInterrupt(interrupts[0].value)).toBe(true);
    expect((await graph.getState(config)).next).toEqual(['tools']);
    expect(runs).toEqual([]);

    const [pending] = await pendingIn(s.ann, conv.id);
    expect(pending).toMatchObject({ externalId: 'call_1', display: { title: 'Delete src_2' } });
    await s.ann.inbox().approve(pending.id);
    const final = (await resumeWhenDecided(graph, config, { tollgate: s.agent() })) as { messages: BaseMessage[] };

    expect(final.messages.at(-1)!.content).toBe('done');
    expect(runs).toEqual([{ id: 'src_2' }]);
    expect(toolResultsSeen()).toEqual(['deleted src_2']);
    await conv.tollgate.flush(); // the result report goes in the background
    // The node ran again on resume and proposed again: still one call, completed.
    expect(((await conv.refresh()).toolCalls ?? []).map((c) => [c.externalId, c.status])).toEqual([
      ['call_1', 'completed'],
    ]);
  });

  it('runs with the arguments the approver edited', async () => {
    const conv = await conversation();
    const runs: Array<{ id: string }> = [];
    const { graph, toolResultsSeen } = agentGraph(
      [withApproval(deleteTool(runs), { conversation: conv })],
      [{ name: 'delete_source', args: { id: 'src_2' }, id: 'call_1' }],
    );
    const config = { configurable: { thread_id: conv.id } };
    await graph.invoke({ messages: [{ role: 'user', content: 'delete src_2' }] }, config);
    const [pending] = await pendingIn(s.ann, conv.id);
    await s.ann.inbox().approve(pending.id, { arguments: { id: 'src_2_archive' } });
    await resumeWhenDecided(graph, config, { tollgate: s.agent() });
    expect(runs).toEqual([{ id: 'src_2_archive' }]);
    expect(toolResultsSeen()).toEqual(['deleted src_2_archive']);
  });

  it('tells the model who rejected the call, how and why; the tool does not run', async () => {
    const conv = await conversation();
    const runs: Array<{ id: string }> = [];
    const { graph, toolResultsSeen } = agentGraph(
      [withApproval(deleteTool(runs), { conversation: () => conv })],
      [{ name: 'delete_source', args: { id: 'src_2' }, id: 'call_1' }],
    );
    const config = { configurable: { thread_id: conv.id } };
    await graph.invoke({ messages: [{ role: 'user', content: 'delete src_2' }] }, config);
    const [pending] = await pendingIn(s.ann, conv.id);
    await s.ann.inbox().reject(pending.id, { reason: 'that is production data' });
    await resumeWhenDecided(graph, config, { tollgate: s.agent() });
    expect(runs).toEqual([]);
    expect(toolResultsSeen()).toEqual(['delete_source was rejected by Ann via cli: that is production data']);
  });

  it('does not interrupt when the policy denies the call, and tells the model', async () => {
    const conv = await conversation();
    const ran: string[] = [];
    const shell = tool(async ({ cmd }: { cmd: string }) => (ran.push(cmd), 'ok'), {
      name: 'shell',
      description: 'Run a command',
      schema: z.object({ cmd: z.string() }),
    });
    const { graph, toolResultsSeen } = agentGraph(
      [withApproval(shell, { conversation: conv })],
      [{ name: 'shell', args: { cmd: 'rm -rf /srv' }, id: 'call_1' }],
    );
    const result = await graph.invoke(
      { messages: [{ role: 'user', content: 'clean up' }] },
      { configurable: { thread_id: conv.id } },
    );
    expect((result as { __interrupt__?: unknown }).__interrupt__).toBeUndefined();
    expect(ran).toEqual([]);
    expect(toolResultsSeen()).toEqual([expect.stringMatching(/^shell was denied by the policy: .+/)]);
  });

  it('parallel calls: each is proposed once, though the ToolNode re-runs them on every resume', async () => {
    const conv = await conversation();
    const runs: Array<{ id: string }> = [];
    const { graph, toolResultsSeen } = agentGraph(
      [withApproval(deleteTool(runs), { conversation: conv })],
      [
        { name: 'delete_source', args: { id: 'a' }, id: 'c1' },
        { name: 'delete_source', args: { id: 'b' }, id: 'c2' },
      ],
    );
    const config = { configurable: { thread_id: conv.id } };
    await graph.invoke({ messages: [{ role: 'user', content: 'delete a and b' }] }, config);
    const pending = await pendingIn(s.ann, conv.id, 2);
    for (const p of pending) {
      if (p.externalId === 'c1') await s.ann.inbox().approve(p.id);
      else await s.ann.inbox().reject(p.id, { reason: 'keep b' });
    }
    await resumeWhenDecided(graph, config, { tollgate: s.agent() });
    expect(runs).toEqual([{ id: 'a' }]);
    expect(toolResultsSeen()).toEqual(['deleted a', 'delete_source was rejected by Ann via cli: keep b']);
    await conv.tollgate.flush();
    const calls = ((await conv.refresh()).toolCalls ?? []).map((c) => [c.externalId, c.status]).sort();
    expect(calls).toEqual([
      ['c1', 'completed'],
      ['c2', 'rejected'],
    ]);
  });
});

describeExample('langgraph', () => s);
