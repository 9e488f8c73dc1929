import fc from 'fast-check';
import { fastAccepts } from './compiled-bodies';
import { ProposeToolCallsRequest, ResultRequest } from './dto/tool-call.dto';
import { parseBody } from './validation';

const fastProposal = fastAccepts(ProposeToolCallsRequest);
const fastResult = fastAccepts(ResultRequest);

/** class-validator's judgement of a body, as every body was judged before the fast path. */
function slow<T extends object>(dto: new () => T, raw: unknown): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(JSON.stringify(parseBody(dto, raw))) };
  } catch {
    return { ok: false };
  }
}

// Text near every bound and of every kind: ASCII ids, astral characters, variation selectors, empty.
const text = fc.oneof(
  fc.constantFrom('', 'get_source', 'a'.repeat(128), 'a'.repeat(129), 'b'.repeat(200), 'b'.repeat(201), 'x y', 'ü'),
  fc.string({ maxLength: 20, unit: 'grapheme' }),
  fc.constantFrom('😀'.repeat(500), '😀'.repeat(501), '\uFE0F'.repeat(501), 'a\uFE0F'.repeat(250)),
  fc.string({ minLength: 3990, maxLength: 4010 }),
);
const anything: fc.Arbitrary<unknown> = fc.oneof(
  text,
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, 1, -1, 0.5, 1.5, true, false, null),
  fc.constant([]),
  fc.constant({}),
  fc.dictionary(text, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
);
/** An object of the given members, each maybe present, maybe replaced by anything, plus maybe an unknown member. */
function member(shape: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> {
  const entries = Object.entries(shape).map(([k, v]) => fc.option(fc.tuple(fc.constant(k), fc.oneof(v, v, anything))));
  const extra = fc.option(fc.tuple(fc.constantFrom('extra', 'toolname', 'Claim', 'fields'), anything), { freq: 8 });
  return fc
    .tuple(fc.tuple(...entries), extra)
    .map(([es, x]) => Object.fromEntries([...es, x].filter((e): e is [string, unknown] => e !== null)));
}
const field = member({ label: text, value: text });
const display = member({ title: text, summary: text, fields: fc.array(fc.oneof(field, anything), { maxLength: 52 }) });
const annotations = member({
  isReadOnly: fc.boolean(),
  requiresApproval: fc.boolean(),
  destructive: fc.boolean(),
  readOnlyHint: fc.boolean(),
  destructiveHint: fc.boolean(),
  idempotentHint: fc.boolean(),
  openWorldHint: fc.boolean(),
  title: text,
});
const call = member({
  id: text,
  toolName: text,
  arguments: fc.oneof(fc.dictionary(text, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }), fc.constant({})),
  annotations,
  reason: text,
  confidence: fc.oneof(fc.double({ min: -0.5, max: 1.5, noNaN: true }), fc.constantFrom(0, 1)),
  estimatedCost: fc.oneof(fc.double({ min: -10, max: 1e6, noNaN: true }), fc.constant(0)),
  display,
});
const resultMembers = {
  outcome: fc.constantFrom('succeeded', 'failed', 'Succeeded', ''),
  output: fc.jsonValue({ maxDepth: 3 }),
  error: fc.oneof(text, fc.string({ minLength: 15990, maxLength: 16010 })),
};
const result = member(resultMembers);
const carried = member({ toolCallId: text, ...resultMembers });
const proposal = member({
  toolCalls: fc.oneof(fc.array(fc.oneof(call, call, anything), { minLength: 0, maxLength: 4 }), anything),
  claim: fc.boolean(),
  claimKey: text,
  results: fc.oneof(
    fc.array(fc.oneof(carried, carried, anything), { maxLength: 3 }),
    fc.array(carried, { minLength: 64, maxLength: 65 }),
    anything,
  ),
});

describe('the compiled hot-path bodies', () => {
  it('take only what class-validator takes, and as it takes it (a proposal)', () => {
    fc.assert(
      fc.property(proposal, (raw) => {
        if (!fastProposal(raw)) return;
        expect(slow(ProposeToolCallsRequest, raw)).toEqual({ ok: true, value: JSON.parse(JSON.stringify(raw)) });
      }),
      { numRuns: 3_000 },
    );
  });

  it('take only what class-validator takes, and as it takes it (a result report)', () => {
    fc.assert(
      fc.property(result, (raw) => {
        if (!fastResult(raw)) return;
        expect(slow(ResultRequest, raw)).toEqual({ ok: true, value: JSON.parse(JSON.stringify(raw)) });
      }),
      { numRuns: 2_000 },
    );
  });

  it('take the usual bodies, so the fast path is the common one', () => {
    expect(
      fastProposal({
        toolCalls: [
          { id: 'call_1', toolName: 'get_source', arguments: { id: 'src_2', deep: { a: [1, null] } } },
          {
            toolName: 'delete_source',
            arguments: {},
            annotations: { destructive: true, readOnlyHint: false },
            reason: 'asked',
            confidence: 0.9,
            estimatedCost: 0,
            display: { title: 'Delete', summary: 'Delete it', fields: [{ label: 'Objects', value: '1,204' }] },
          },
        ],
        claim: true,
        claimKey: 'claim_0f1e',
        results: [
          { toolCallId: 'tc_9a', outcome: 'succeeded', output: { rows: [1, 2] } },
          { toolCallId: 'tc_9b', outcome: 'failed', error: 'timed out' },
        ],
      }),
    ).toBe(true);
    expect(fastResult({ outcome: 'succeeded', output: [1, { a: 'b' }] })).toBe(true);
    expect(fastResult({ outcome: 'failed', error: 'boom' })).toBe(true);
  });

  it('leave every refusal to class-validator, which names the faults as before', () => {
    const refused = [
      { toolCalls: [{ toolName: 'get source', arguments: {} }] },
      { toolCalls: [{ toolName: 'get_source', arguments: [] }] },
      { toolCalls: [{ toolName: 'get_source', arguments: {}, extra: 1 }] },
      { toolCalls: [], claim: true },
      { toolCalls: [{ toolName: 'get_source', arguments: {} }], claim: 'yes' },
      { toolCalls: [{ toolName: 'get_source', arguments: {}, display: { fields: [{ label: 'x' }] } }] },
      {
        toolCalls: [{ toolName: 'get_source', arguments: {} }],
        results: [{ toolCallId: 'tc 1', outcome: 'succeeded' }],
      },
      { toolCalls: [{ toolName: 'get_source', arguments: {} }], results: [{ toolCallId: 'tc_1', outcome: 'done' }] },
      { toolCalls: [{ toolName: 'get_source', arguments: {} }], results: [{ outcome: 'succeeded' }] },
    ];
    for (const raw of refused) {
      expect(fastProposal(raw)).toBe(false);
      expect(() => parseBody(ProposeToolCallsRequest, raw, fastProposal)).toThrow();
    }
    expect(() => parseBody(ProposeToolCallsRequest, refused[2], fastProposal)).toThrow(/extra/);
  });
});
