import { HaltTarget } from '../halt.aggregate';
import { haltCovers, haltThatApplies } from './halt-that-applies';

const place = { agentId: 'bot', conversationId: 'c1' };
const tenant = { scope: 'tenant', id: '', reason: 'incident' } as const;
const agent = { scope: 'agent', id: 'bot', reason: 'runaway bot' } as const;
const conversation = { scope: 'conversation', id: 'c1', reason: 'wrong customer' } as const;

/** Every order of a list: the answer may not depend on the order the store returned the rows in. */
function orders<T>(list: T[]): T[][] {
  if (list.length <= 1) return [list];
  return list.flatMap((x, i) => orders([...list.slice(0, i), ...list.slice(i + 1)]).map((rest) => [x, ...rest]));
}

describe('the halt that applies', () => {
  it('is none when no halt is in force', () => {
    expect(haltThatApplies([], place)).toBeNull();
  });

  it('is the only covering halt, whatever its scope', () => {
    for (const h of [tenant, agent, conversation]) expect(haltThatApplies([h], place)).toBe(h);
  });

  // The SQL chose with ORDER BY CASE scope WHEN 'tenant' THEN 0 WHEN 'agent' THEN 1 ELSE 2 END LIMIT 1.
  it('is the widest covering one: tenant, then agent, then conversation, in any order of the candidates', () => {
    for (const list of orders([tenant, agent, conversation])) expect(haltThatApplies(list, place)).toBe(tenant);
    for (const list of orders([agent, conversation])) expect(haltThatApplies(list, place)).toBe(agent);
    for (const list of orders([tenant, conversation])) expect(haltThatApplies(list, place)).toBe(tenant);
    for (const list of orders([tenant, agent])) expect(haltThatApplies(list, place)).toBe(tenant);
  });

  it('leaves out halts of another agent or conversation, even wider ones', () => {
    const otherAgent = { scope: 'agent', id: 'other-bot', reason: 'x' } as const;
    const otherConversation = { scope: 'conversation', id: 'c2', reason: 'y' } as const;
    expect(haltThatApplies([otherAgent, otherConversation], place)).toBeNull();
    for (const list of orders([otherAgent, conversation, otherConversation]))
      expect(haltThatApplies(list, place)).toBe(conversation);
  });

  it('reads a tenant halt only with the empty id, as the store keeps it', () => {
    expect(haltCovers({ scope: 'tenant', id: '' }, place)).toBe(true);
    expect(haltCovers({ scope: 'tenant', id: 'bot' } as HaltTarget, place)).toBe(false);
  });

  it('does not take an agent id for a conversation id, or the reverse', () => {
    const same = { agentId: 'x', conversationId: 'y' };
    expect(haltCovers({ scope: 'agent', id: 'y' }, same)).toBe(false);
    expect(haltCovers({ scope: 'conversation', id: 'x' }, same)).toBe(false);
    expect(haltCovers({ scope: 'agent', id: 'x' }, same)).toBe(true);
    expect(haltCovers({ scope: 'conversation', id: 'y' }, same)).toBe(true);
  });
});
