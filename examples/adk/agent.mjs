// A Google ADK agent whose destructive tool, delete_source, runs only once a person approves it in Tollgate.
// Offline: the model is a scripted `BaseLlm`, made to ask for delete_source and then to repeat what the tool
// answered. With a real model, give the agent `model: 'gemini-2.5-flash'` (it then uses GOOGLE_GENAI_API_KEY).
//
//   npm start                                                        # Tollgate, in another terminal
//   TOLLGATE_TOKEN=$(npx tollgate token --sub support-bot --role agent) node examples/adk/agent.mjs
//   … then approve, edit or reject the call in the web inbox at http://127.0.0.1:8080/
import { pathToFileURL } from 'node:url';
import { BaseLlm, FunctionTool, InMemoryRunner, LlmAgent } from '@google/adk';
import { z } from 'zod';
import { Tollgate } from '@tollgate/sdk';
import { tollgateTools } from '@tollgate/sdk/adk';

/** The model: first asks to delete src_2, then says what the tool answered. Every request is kept. */
export class ScriptedLlm extends BaseLlm {
  requests = [];
  constructor() {
    super({ model: 'scripted' });
  }
  async *generateContentAsync(request) {
    this.requests.push(request);
    const response = request.contents.flatMap((c) => c.parts ?? []).find((p) => p.functionResponse)
      ?.functionResponse.response;
    if (response) {
      // ADK wraps a tool's text in { result }; anything else is the tool's object itself.
      const said = typeof response.result === 'string' ? response.result : JSON.stringify(response);
      yield { content: { role: 'model', parts: [{ text: `The tool said: ${said}` }] } };
    } else {
      yield {
        content: {
          role: 'model',
          parts: [{ functionCall: { id: 'call_1', name: 'delete_source', args: { id: 'src_2' } } }],
        },
      };
    }
  }
  async connect() {
    throw new Error('this example does not stream live');
  }
}

/** The knowledge base the tool deletes from (a stand-in for your API). */
export const sources = new Map([
  ['src_1', 'Pricing FAQ'],
  ['src_2', 'Old pricing FAQ'],
  ['src_3', 'Archive'],
]);

export async function main({
  url = 'http://127.0.0.1:8080',
  token,
  conversationId = `adk-example-${Date.now()}`,
  model = new ScriptedLlm(),
  log = console.log,
} = {}) {
  const tollgate = new Tollgate({ url, token });
  const conversation = await tollgate.conversation({
    id: conversationId,
    user: { id: 'ann', roles: ['admin'] },
    title: 'Tidy the knowledge base (Google ADK)',
  });

  const deleteSource = new FunctionTool({
    name: 'delete_source',
    description: 'Delete a source from the knowledge base',
    parameters: z.object({ id: z.string() }),
    execute: async ({ id }) => ({ deleted: id, existed: sources.delete(id) }),
  });
  const agent = new LlmAgent({
    name: 'librarian',
    instruction: 'You keep the knowledge base tidy.',
    model,
    tools: tollgateTools([deleteSource], {
      conversation,
      annotations: { destructive: true }, // unregistered tools are judged by these flags: destructive asks a person
      display: (a) => ({ title: `Delete source ${a.id}`, summary: 'This cannot be undone.' }),
      reason: 'The user asked to remove the outdated FAQ',
    }),
  });
  const runner = new InMemoryRunner({ agent, appName: 'librarian' });
  const session = await runner.sessionService.createSession({ appName: 'librarian', userId: 'ann' });

  log(`Waiting for a decision on delete_source in conversation ${conversation.id} (open the web inbox)…`);
  let said = '';
  for await (const event of runner.runAsync({
    userId: 'ann',
    sessionId: session.id,
    newMessage: { role: 'user', parts: [{ text: 'Delete the old pricing FAQ (src_2).' }] },
  })) {
    const text = event.content?.parts?.map((p) => p.text ?? '').join('');
    if (event.author === 'librarian' && text) said = text;
  }
  log(said);
  return said;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main({ url: process.env.TOLLGATE_URL, token: process.env.TOLLGATE_TOKEN }).catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
