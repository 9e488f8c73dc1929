// A Vercel AI SDK agent whose destructive tool, delete_source, runs only once a person approves it in Tollgate.
// Offline: the model is the AI SDK's test double, scripted to ask for delete_source and then to repeat what the
// tool answered. With a real model, replace `scriptedModel()` with e.g. `openai('gpt-4.1')` from '@ai-sdk/openai'.
//
//   npm start                                                        # Tollgate, in another terminal
//   TOLLGATE_TOKEN=$(npx tollgate token --sub support-bot --role agent) node examples/ai-sdk/agent.mjs
//   … then approve, edit or reject the call in the web inbox at http://127.0.0.1:8080/
import { pathToFileURL } from 'node:url';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { Tollgate } from '@tollgate/sdk';
import { withApproval } from '@tollgate/sdk/ai';

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

/** The model: first asks to delete src_2, then says what the tool answered. */
export function scriptedModel() {
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      const last = prompt[prompt.length - 1];
      const result = last.role === 'tool' ? last.content.find((p) => p.type === 'tool-result') : undefined;
      if (result) {
        const said = result.output.type === 'text' ? result.output.value : JSON.stringify(result.output.value);
        return { content: [{ type: 'text', text: `The tool said: ${said}` }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
      }
      return {
        content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'delete_source', input: JSON.stringify({ id: 'src_2' }) }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    },
  });
}

/** The knowledge base the tool deletes from (a stand-in for your API). */
export const sources = new Map([['src_1', 'Pricing FAQ'], ['src_2', 'Old pricing FAQ'], ['src_3', 'Archive']]);

export async function main({ url = 'http://127.0.0.1:8080', token, conversationId = `ai-sdk-example-${Date.now()}`, model = scriptedModel(), log = console.log } = {}) {
  const tollgate = new Tollgate({ url, token });
  const conversation = await tollgate.conversation({ id: conversationId, user: { id: 'ann', roles: ['admin'] }, title: 'Tidy the knowledge base (AI SDK)' });

  const deleteSource = tool({
    description: 'Delete a source from the knowledge base',
    inputSchema: z.object({ id: z.string() }),
    execute: async ({ id }) => ({ deleted: id, existed: sources.delete(id) }),
  });

  log(`Waiting for a decision on delete_source in conversation ${conversation.id} (open the web inbox)…`);
  const result = await generateText({
    model,
    prompt: 'Delete the old pricing FAQ (src_2).',
    stopWhen: stepCountIs(5),
    tools: {
      delete_source: withApproval(deleteSource, {
        toolName: 'delete_source',
        conversation,
        annotations: { destructive: true }, // unregistered tools are judged by these flags: destructive asks a person
        display: (a) => ({ title: `Delete source ${a.id}`, summary: 'This cannot be undone.' }),
        reason: 'The user asked to remove the outdated FAQ',
      }),
    },
  });
  log(result.text);
  return result.text;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main({ url: process.env.TOLLGATE_URL, token: process.env.TOLLGATE_TOKEN }).catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
