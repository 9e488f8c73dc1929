import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import type { ElicitRequest } from '@modelcontextprotocol/client';
import type { TollgateMcpGateway } from '../../packages/sdk/src/integrations/mcp.js';

/* An MCP chat client for the gateway's tests: one that answers its forms by a rule, as a real client might unseen. */

export type Form = ElicitRequest['params'] & {
  requestedSchema?: { properties: Record<string, Record<string, unknown>> };
};
export type Answer = { action: 'accept'; content: Record<string, string | boolean> };

/** What a client that accepts every form fills in: true for a yes/no, the default or first choice, some text. */
export function autoAccept(form: Form): Answer {
  const content: Record<string, string | boolean> = {};
  for (const [name, field] of Object.entries(form.requestedSchema?.properties ?? {})) {
    const first = (field.oneOf as Array<{ const: string }> | undefined)?.[0]?.const;
    content[name] = field.type === 'boolean' ? true : ((field.default as string | undefined) ?? first ?? 'ok');
  }
  return { action: 'accept', content };
}

/**
 * A person's chat session on the gateway (their own token at hand), with a client that answers every form with
 * `answer`; `forms` are the forms it was shown. Close the client when the test ends.
 */
export async function chatSession(
  gateway: TollgateMcpGateway,
  person: { user: { id: string; name?: string; roles: string[] }; userToken: string },
  answer: (form: Form) => Answer,
): Promise<{ client: Client; forms: Form[] }> {
  const forms: Form[] = [];
  const client = new Client({ name: 'auto-accept', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler('elicitation/create', async (req) => {
    forms.push(req.params as Form);
    return answer(req.params as Form);
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await gateway.server(person).connect(serverSide);
  await client.connect(clientSide);
  return { client, forms };
}
