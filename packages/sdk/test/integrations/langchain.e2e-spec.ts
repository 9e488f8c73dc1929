/**
 * `@tollgate/sdk/langchain` through a real Tollgate, with a real `createAgent` and LangChain's fake chat model:
 * the model asks for a tool, Tollgate's policy or a person decides, and the model's next call shows the
 * ToolMessage it was given.
 */
import { createAgent, tool, type BaseMessage } from 'langchain';
import { AIMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { MemorySaver } from '@langchain/langgraph';
import { z } from 'zod';
import { TollgateError } from '../../src/errors.js';
import { TollgateConversation } from '../../src/conversation.js';
import { isTollgateInterrupt, resumeWhenDecided, tollgateMiddleware } from '../../src/integrations/langchain.js';
import { conversations, describeExample, pendingIn, type Setup, withServer, type TestServer } from '../support.js';

let server: TestServer;
let s: Setup;

withServer((started, setup) => {
  server = started;
  s = setup;
});

const conversation = conversations(() => s, 'conv-lc');

type Call = { name: string; args: Record<string, unknown>; id: string };

/** The model asks for `calls`, then answers "done"; `toolResultsSeen` is what the tools said in its second call. */
function scripted(calls: Call[]) {
  const seen: BaseMessage[][] = [];
  const model = fakeModel()
    .respondWithTools(calls)
    .respond((messages) => {
      seen.push(messages);
      return new AIMessage('done');
    });
  const toolMessages = () => seen[0].filter((m) => m.getType() === 'tool');
  return { model, toolMessages, toolResultsSeen: () => toolMessages().map((m) => m.content) };
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

const ask = (content: string) => ({ messages: [{ role: 'user', content }] });

describe('tollgateMiddleware (LangChain 1 createAgent)', () => {
  it('runs a call the policy approves at once, claimed and reported; an ungated tool runs without Tollgate', async () => {
    const conv = await conversation();
    const ran: string[] = [];
    const getWeather = tool(async ({ city }: { city: string }) => (ran.push(city), `sunny in ${city}`), {
      name: 'get_weather',
      description: 'The weather',
      schema: z.object({ city: z.string() }),
    });
    const getTime = tool(async () => (ran.push('time'), '12:00'), {
      name: 'get_time',
      description: 'The time',
      schema: z.object({}),
    });
    const { model, toolResultsSeen } = scripted([
      { name: 'get_weather', args: { city: 'Oslo' }, id: 'call_1' },
      { name: 'get_time', args: {}, id: 'call_2' },
    ]);
    const agent = createAgent({
      model,
      tools: [getWeather, getTime],
      middleware: [tollgateMiddleware({ conversation: conv, tools: ['get_weather'] })],
    });
    const result = await agent.invoke(ask('weather in Oslo?'));
    expect(result.messages.at(-1)!.content).toBe('done');
    expect(ran.sort()).toEqual(['Oslo', 'time']);
    expect(toolResultsSeen()).toEqual(['sunny in Oslo', '12:00']);
    await conv.tollgate.flush(); // the result report goes in the background
    expect(((await conv.refresh()).toolCalls ?? []).map((c) => [c.externalId, c.status, c.result?.output])).toEqual([
      ['call_1', 'completed', 'sunny in Oslo'],
    ]);
  });

  it('answers a call the policy denies with the refusal; the tool never runs', async () => {
    const conv = await conversation();
    const ran: string[] = [];
    const shell = tool(async ({ cmd }: { cmd: string }) => (ran.push(cmd), 'ok'), {
      name: 'shell',
      description: 'Run a command',
      schema: z.object({ cmd: z.string() }),
    });
    const { model, toolMessages } = scripted([{ name: 'shell', args: { cmd: 'rm -rf /srv' }, id: 'call_1' }]);
    const agent = createAgent({ model, tools: [shell], middleware: [tollgateMiddleware({ conversation: conv })] });
    await agent.invoke(ask('clean up'));
    expect(ran).toEqual([]);
    expect(toolMessages().map((m) => [m.content, (m as { status?: string }).status])).toEqual([
      [expect.stringMatching(/^shell was denied by the policy: .+/), 'error'],
    ]);
  });

  it('waits while a person decides, and runs with the arguments they edited', async () => {
    const conv = await conversation();
    const runs: Array<{ id: string }> = [];
    const { model, toolResultsSeen } = scripted([{ name: 'delete_source', args: { id: 'src_2' }, id: 'call_1' }]);
    const agent = createAgent({
      model,
      tools: [deleteTool(runs)],
      middleware: [
        tollgateMiddleware({ conversation: () => conv, display: (a) => ({ title: `Delete ${String(a.id)}` }) }),
      ],
    });
    const running = agent.invoke(ask('delete src_2'));
    const [pending] = await pendingIn(s.ann, conv.id);
    expect(pending).toMatchObject({ externalId: 'call_1', display: { title: 'Delete src_2' } });
    expect(runs).toEqual([]);
    await s.ann.inbox().approve(pending.id, { arguments: { id: 'src_2_archive' } });
    expect((await running).messages.at(-1)!.content).toBe('done');
    expect(runs).toEqual([{ id: 'src_2_archive' }]);
    expect(toolResultsSeen()).toEqual(['deleted src_2_archive']);
    await conv.tollgate.flush();
    const [call] = (await conv.refresh()).toolCalls ?? [];
    expect(call).toMatchObject({ status: 'completed', decision: { editedArguments: { id: 'src_2_archive' } } });
  });

  it('tells the model who rejected the call, how and why; the tool does not run', async () => {
    const conv = await conversation();
    const runs: Array<{ id: string }> = [];
    const { model, toolMessages } = scripted([{ name: 'delete_source', args: { id: 'src_2' }, id: 'call_1' }]);
    const agent = createAgent({
      model,
      tools: [deleteTool(runs)],
      middleware: [tollgateMiddleware({ conversation: conv })],
    });
    const running = agent.invoke(ask('delete src_2'));
    const [pending] = await pendingIn(s.ann, conv.id);
    await s.ann.inbox().reject(pending.id, { reason: 'that is production data' });
    await running;
    expect(runs).toEqual([]);
    expect(toolMessages().map((m) => [m.content, (m as { status?: string }).status])).toEqual([
      ['delete_source was rejected by Ann via cli: that is production data', 'error'],
    ]);
  });

  it('respond: a person answers in the tool’s place; the model reads the answer, and Tollgate records who gave it', async () => {
    const conv = await conversation();
    const sent: unknown[] = [];
    const sendEmail = tool(async (a: { to: string; body: string }) => (sent.push(a), 'sent'), {
      name: 'send_email',
      description: 'Send an email',
      schema: z.object({ to: z.string(), body: z.string() }),
    });
    const { model, toolResultsSeen } = scripted([
      { name: 'send_email', args: { to: 'bob@example.com', body: 'Is the invoice paid?' }, id: 'call_1' },
    ]);
    const agent = createAgent({
      model,
      tools: [sendEmail],
      // The person's words are the tool's answer, with who gave it.
      middleware: [
        tollgateMiddleware({
          conversation: conv,
          onRefusal: (e) => (e.status === 'rejected' ? `${e.decidedBy?.name} answered: ${e.reason}` : e.message),
        }),
      ],
    });
    const running = agent.invoke(ask('ask Bob whether the invoice is paid'));
    const [pending] = await pendingIn(s.ann, conv.id);
    await s.ann.inbox().reject(pending.id, { reason: 'No need to email Bob: the invoice was paid on 3 March.' });
    await running;
    expect(sent).toEqual([]);
    expect(toolResultsSeen()).toEqual(['Ann answered: No need to email Bob: the invoice was paid on 3 March.']);
    const [call] = (await conv.refresh()).toolCalls ?? [];
    expect(call).toMatchObject({
      status: 'rejected',
      decision: { by: { id: 'ann', via: 'cli' }, reason: 'No need to email Bob: the invoice was paid on 3 March.' },
    });
  });

  it('interrupt: true pauses the graph while pending; resumed, it runs the edited arguments once', async () => {
    const conv = await conversation();
    const runs: Array<{ id: string }> = [];
    const { model, toolResultsSeen } = scripted([{ name: 'delete_source', args: { id: 'src_2' }, id: 'call_1' }]);
    const agent = createAgent({
      model,
      tools: [deleteTool(runs)],
      middleware: [tollgateMiddleware({ conversation: conv, interrupt: true })],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: conv.id } };
    const first = await agent.invoke(ask('delete src_2'), config);
    const interrupts = (first as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__ ?? [];
    expect(interrupts.map((i) => i.value)).toEqual([
      expect.objectContaining({ kind: 'tollgate-approval', conversationId: conv.id, arguments: { id: 'src_2' } }),
    ]);
    expect(isTollgateInterrupt(interrupts[0].value)).toBe(true);
    expect(runs).toEqual([]);

    const [pending] = await pendingIn(s.ann, conv.id);
    await s.ann.inbox().approve(pending.id, { arguments: { id: 'src_3' } });
    const final = (await resumeWhenDecided(agent, config, { tollgate: s.agent() })) as { messages: BaseMessage[] };
    expect(final.messages.at(-1)!.content).toBe('done');
    expect(runs).toEqual([{ id: 'src_3' }]);
    expect(toolResultsSeen()).toEqual(['deleted src_3']);
    await conv.tollgate.flush();
    // The tool node ran again on resume and proposed again: still one call, completed.
    expect(((await conv.refresh()).toolCalls ?? []).map((c) => [c.externalId, c.status])).toEqual([
      ['call_1', 'completed'],
    ]);
  });

  it('interrupt: true refuses a tool call without an id (each resume would propose it anew); nothing is proposed', async () => {
    const conv = await conversation();
    const runs: Array<{ id: string }> = [];
    const model = fakeModel().respond(
      new AIMessage({ content: '', tool_calls: [{ name: 'delete_source', args: { id: 'src_2' }, type: 'tool_call' }] }),
    );
    const agent = createAgent({
      model,
      tools: [deleteTool(runs)],
      middleware: [tollgateMiddleware({ conversation: conv, interrupt: true })],
      checkpointer: new MemorySaver(),
    });
    const error = await agent.invoke(ask('delete src_2'), { configurable: { thread_id: conv.id } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({
      message: expect.stringContaining('the tool call delete_source has no id'),
    });
    expect(runs).toEqual([]);
    expect((await conv.refresh()).toolCalls ?? []).toEqual([]);
  });

  it('fails closed when Tollgate cannot be reached: the run fails and the tool never runs', async () => {
    const conv = await conversation();
    // The same conversation, through a client whose server is gone (a closed port on loopback).
    const gone = s.agent({ url: 'http://127.0.0.1:1', retry: { maxAttempts: 2, initialDelayMs: 1, maxDelayMs: 1 } });
    const unreachable = new TollgateConversation(gone, conv.conversation);
    const runs: Array<{ id: string }> = [];
    const { model } = scripted([{ name: 'delete_source', args: { id: 'src_2' }, id: 'call_1' }]);
    const agent = createAgent({
      model,
      tools: [deleteTool(runs)],
      middleware: [tollgateMiddleware({ conversation: unreachable })],
    });
    const error = await agent.invoke(ask('delete src_2')).then(
      () => undefined,
      (e: unknown) => e,
    );
    // LangChain wraps what a middleware throws in its MiddlewareError; the cause is Tollgate's.
    expect(error).toMatchObject({ name: 'TollgateError', message: expect.stringMatching(/^network_error: /) });
    expect((error as Error).cause).toBeInstanceOf(TollgateError);
    expect((error as Error).cause).toMatchObject({ code: 'network_error' });
    expect(runs).toEqual([]);
    expect((await conv.refresh()).toolCalls ?? []).toEqual([]);
  });
});

describeExample('langchain', () => s);
