// A LangChain 1 agent (createAgent) whose destructive tool, delete_source, runs only once a person approves it in
// Tollgate: tollgateMiddleware takes the place of humanInTheLoopMiddleware. The tool call waits while the call is
// pending, then runs with the approved (maybe edited) arguments, or the model reads who refused and why.
// Offline: the model is LangChain's fakeModel(), scripted to ask for delete_source and then to repeat what the
// tool answered. With a real model, use e.g. `model: 'openai:gpt-4.1'`.
//
//   npm start                                                        # Tollgate, in another terminal
//   TOLLGATE_TOKEN=$(npx tollgate token --sub support-bot --role agent) node examples/langchain/agent.mjs
//   … then approve, edit or reject the call in the web inbox at http://127.0.0.1:8080/
import { pathToFileURL } from 'node:url';
import { AIMessage, createAgent, tool } from 'langchain';
import { fakeModel } from '@langchain/core/testing';
import { z } from 'zod';
import { Tollgate } from '@tollgate/sdk';
import { tollgateMiddleware } from '@tollgate/sdk/langchain';

/** The model: first asks to delete src_2, then says what the tool answered. */
export function scriptedModel() {
  return fakeModel()
    .respondWithTools([{ name: 'delete_source', args: { id: 'src_2' }, id: 'call_1' }])
    .respond((messages) => new AIMessage(`The tool said: ${messages.at(-1).content}`));
}

/** The knowledge base the tool deletes from (a stand-in for your API). */
export const sources = new Map([['src_1', 'Pricing FAQ'], ['src_2', 'Old pricing FAQ'], ['src_3', 'Archive']]);

export async function main({ url = 'http://127.0.0.1:8080', token, conversationId = `langchain-example-${Date.now()}`, model = scriptedModel(), log = console.log } = {}) {
  const tollgate = new Tollgate({ url, token });
  const conversation = await tollgate.conversation({ id: conversationId, user: { id: 'ann', roles: ['admin'] }, title: 'Tidy the knowledge base (LangChain)' });

  const deleteSource = tool(async ({ id }) => JSON.stringify({ deleted: id, existed: sources.delete(id) }), {
    name: 'delete_source',
    description: 'Delete a source from the knowledge base',
    schema: z.object({ id: z.string() }),
  });
  const agent = createAgent({
    model,
    tools: [deleteSource],
    middleware: [
      tollgateMiddleware({
        conversation,
        annotations: { destructive: true }, // unregistered tools are judged by these flags: destructive asks a person
        display: (a) => ({ title: `Delete source ${a.id}`, summary: 'This cannot be undone.' }),
        reason: 'The user asked to remove the outdated FAQ',
      }),
    ],
  });

  log(`Waiting for a decision on delete_source in conversation ${conversation.id} (open the web inbox)…`);
  const result = await agent.invoke({ messages: [{ role: 'user', content: 'Delete the old pricing FAQ (src_2).' }] });
  const text = result.messages.at(-1).content;
  log(text);
  return text;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main({ url: process.env.TOLLGATE_URL, token: process.env.TOLLGATE_TOKEN }).catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
