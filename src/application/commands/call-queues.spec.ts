import { CallQueues } from './call-queues';

describe('CallQueues', () => {
  it('puts a claim or report of a call proposed here in its conversation’s queue, per tenant', () => {
    const q = new CallQueues();
    q.proposed('t1', 'conv-1', ['tc_a', 'tc_b']);
    expect(q.ofCall('t1', 'tc_a')).toBe(CallQueues.conversation('t1', 'conv-1'));
    expect(q.ofCall('t1', 'tc_b')).toBe(q.ofCall('t1', 'tc_a'));
    expect(q.ofCall('t2', 'tc_a')).toBe('tool-call\u0000t2\u0000tc_a');
  });

  it('gives a call it has not seen a queue of its own', () => {
    expect(new CallQueues().ofCall('t1', 'tc_x')).toBe('tool-call\u0000t1\u0000tc_x');
  });

  it('remembers the 10,000 newest calls: the oldest fall back to their own queue', () => {
    const q = new CallQueues();
    q.proposed('t', 'c-old', ['tc_0']);
    q.proposed(
      't',
      'c',
      Array.from({ length: 10_000 }, (_, i) => `tc_${i + 1}`),
    );
    expect(q.ofCall('t', 'tc_0')).toBe('tool-call\u0000t\u0000tc_0');
    expect(q.ofCall('t', 'tc_1')).toBe(CallQueues.conversation('t', 'c'));
    expect(q.ofCall('t', 'tc_10000')).toBe(CallQueues.conversation('t', 'c'));
  });
});
