// An OpenAI Agents SDK agent whose destructive tool, delete_source, runs only once a person approves it in
// Tollgate. Offline: the model is a fake `Model`, scripted to ask for delete_source and then to repeat what the
// tool answered. With a real model, leave `model` out of the Agent (it then uses OpenAI with OPENAI_API_KEY).
//
//   npm start                                                        # Tollgate, in another terminal
//   TOLLGATE_TOKEN=$(npx tollgate token --sub support-bot --role agent) node examples/openai-agents/agent.mjs
//   … then approve, edit or reject the call in the web inbox at http://127.0.0.1:8080/
import { pathToFileURL } from 'node:url';
import { Agent, run, setTracingDisabled, tool, Usage } from '@openai/agents';
import { z } from 'zod';
import { Tollgate } from '@tollgate/sdk';
import { withApproval } from '@tollgate/sdk/openai-agents';

setTracingDisabled(true); // no trace export: it would need an OpenAI key and the network

/** The model: first asks to delete src_2, then says what the tool answered. Every request is kept. */
export class ScriptedModel {
  requests = [];
  async getResponse(request) {
    this.requests.push(request);
    const items = typeof request.input === 'string' ? [] : request.input;
    const result = items.find((i) => i.type === 'function_call_result');
    const output = result
      ? [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: `The tool said: ${result.output.text}` }] }]
      : [{ type: 'function_call', callId: 'call_1', name: 'delete_source', arguments: JSON.stringify({ id: 'src_2' }), status: 'completed' }];
    return { usage: new Usage(), output };
  }
  async *getStreamedResponse() {
    throw new Error('this example does not stream');
  }
}

/** The knowledge base the tool deletes from (a stand-in for your API). */
export const sources = new Map([['src_1', 'Pricing FAQ'], ['src_2', 'Old pricing FAQ'], ['src_3', 'Archive']]);

export async function main({ url = 'http://127.0.0.1:8080', token, conversationId = `openai-agents-example-${Date.now()}`, model = new ScriptedModel(), log = console.log } = {}) {
  const tollgate = new Tollgate({ url, token });
  const conversation = await tollgate.conversation({ id: conversationId, user: { id: 'ann', roles: ['admin'] }, title: 'Tidy the knowledge base (OpenAI Agents)' });

  const deleteSource = tool({
    name: 'delete_source',
    description: 'Delete a source from the knowledge base',
    parameters: z.object({ id: z.string() }),
    execute: async ({ id }) => JSON.stringify({ deleted: id, existed: sources.delete(id) }),
  });
  const agent = new Agent({
    name: 'librarian',
    instructions: 'You keep the knowledge base tidy.',
    model,
    tools: [
      withApproval(deleteSource, {
        conversation,
        annotations: { destructive: true }, // unregistered tools are judged by these flags: destructive asks a person
        display: (a) => ({ title: `Delete source ${a.id}`, summary: 'This cannot be undone.' }),
        reason: 'The user asked to remove the outdated FAQ',
      }),
    ],
  });

  log(`Waiting for a decision on delete_source in conversation ${conversation.id} (open the web inbox)…`);
  const result = await run(agent, 'Delete the old pricing FAQ (src_2).');
  log(result.finalOutput);
  return result.finalOutput;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main({ url: process.env.TOLLGATE_URL, token: process.env.TOLLGATE_TOKEN }).catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
