import fc from 'fast-check';
import canonicalize from 'canonicalize';
import { chainTemplate, ChainedEventJson, eventHash, sha256Hex } from './event-store';

const base = (): Omit<ChainedEventJson, 'seq' | 'prevHash'> => ({
  id: '0b5f3c2e-7a55-4d0e-9a40-6f1e0c1f2a3b',
  type: 'ToolCallProposed',
  at: '2026-11-23T05:00:00.123Z',
  recordedAt: '2026-11-23T05:00:00.125Z',
  tenant: 'acme',
  instanceId: 'i-1',
  conversationId: 'conv_1',
  toolCallId: 'tc_1',
  toolName: 'delete_source',
  actor: { kind: 'agent', id: 'agent-1' },
  data: { arguments: { id: 'src_1' } },
});

/** What the database does with a template (tollgate_append_events), in TypeScript. */
function hashFromTemplate(t: { head: string; mid: string; tail: string }, prevHash: string, seq: number): string {
  return sha256Hex(prevHash + t.head + prevHash + t.mid + String(seq) + t.tail);
}

describe('chainTemplate', () => {
  it('splits the canonical JSON exactly around prevHash and seq', () => {
    const e = base();
    const t = chainTemplate(e);
    const prev = 'a'.repeat(64);
    expect(t.head + prev + t.mid + '42' + t.tail).toBe(canonicalize({ ...e, seq: 42, prevHash: prev }));
    expect(hashFromTemplate(t, prev, 42)).toBe(eventHash(prev, { ...e, seq: 42, prevHash: prev }));
  });

  it('holds for any data, optional fields and text an attacker may choose', () => {
    const text = fc.string({ unit: 'binary' });
    fc.assert(
      fc.property(
        fc.record(
          {
            correlationId: text,
            conversationId: text,
            toolCallId: text,
            toolName: text,
          },
          { requiredKeys: [] },
        ),
        fc.jsonValue(),
        fc.dictionary(text, fc.jsonValue()),
        fc.nat(),
        fc.stringMatching(/^[0-9a-f]{64}$/),
        (optional, data, actor, seq, prev) => {
          const e = {
            ...base(),
            conversationId: undefined,
            toolCallId: undefined,
            toolName: undefined,
            ...optional,
            actor,
            data: { data, seq: 7, prevHash: prev },
          };
          const clean = JSON.parse(JSON.stringify(e));
          const t = chainTemplate(clean);
          expect(t.head + prev + t.mid + String(seq) + t.tail).toBe(canonicalize({ ...clean, seq, prevHash: prev }));
        },
      ),
      { numRuns: 300 },
    );
  });
});
