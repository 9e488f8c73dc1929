import { ItemOutcome, TenantGroupCommit } from './group-commit';
import { KeyedQueue } from './keyed-queue';

/** A flush the test finishes by hand, recording what each call was given. */
function manualFlush() {
  const calls: Array<{
    tenant: string;
    items: string[];
    finish(outcomes?: Array<ItemOutcome<string>>): void;
    fail(e: unknown): void;
  }> = [];
  const flush = (tenant: string, items: string[]) =>
    new Promise<Array<ItemOutcome<string>>>((resolve, reject) => {
      calls.push({
        tenant,
        items,
        finish: (o) => resolve(o ?? items.map((i) => ({ ok: true, value: `${i}!` }))),
        fail: reject,
      });
    });
  return { calls, flush };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('TenantGroupCommit', () => {
  it('sends a lone item at once, and what arrives meanwhile together in the next commit', async () => {
    const { calls, flush } = manualFlush();
    const sizes: number[] = [];
    const group = new TenantGroupCommit(flush, 64, (n) => sizes.push(n));
    const a = group.submit('t1', 'a');
    expect(calls.map((c) => c.items)).toEqual([['a']]);
    const rest = ['b', 'c', 'd'].map((i) => group.submit('t1', i));
    expect(calls).toHaveLength(1); // one commit per tenant at a time
    calls[0].finish();
    await expect(a).resolves.toBe('a!');
    await settle();
    expect(calls.map((c) => c.items)).toEqual([['a'], ['b', 'c', 'd']]);
    calls[1].finish();
    await expect(Promise.all(rest)).resolves.toEqual(['b!', 'c!', 'd!']);
    expect(sizes).toEqual([1, 3]);
  });

  it('commits tenants independently', async () => {
    const { calls, flush } = manualFlush();
    const group = new TenantGroupCommit(flush);
    const a = group.submit('t1', 'a');
    const b = group.submit('t2', 'b');
    expect(calls.map((c) => [c.tenant, c.items])).toEqual([
      ['t1', ['a']],
      ['t2', ['b']],
    ]);
    calls[1].finish();
    await expect(b).resolves.toBe('b!');
    calls[0].finish();
    await expect(a).resolves.toBe('a!');
  });

  it('answers each item its own outcome, a whole failed flush to all of its items, and goes on', async () => {
    const { calls, flush } = manualFlush();
    const group = new TenantGroupCommit(flush);
    const first = group.submit('t', 'first');
    const [x, y] = [group.submit('t', 'x'), group.submit('t', 'y')];
    calls[0].fail(new Error('connection lost'));
    await expect(first).rejects.toThrow('connection lost');
    await settle();
    calls[1].finish([
      { ok: false, error: new Error('stale') },
      { ok: true, value: 'y!' },
    ]);
    await expect(x).rejects.toThrow('stale');
    await expect(y).resolves.toBe('y!');
    const z = group.submit('t', 'z');
    expect(calls.map((c) => c.items)).toEqual([['first'], ['x', 'y'], ['z']]);
    calls[2].finish();
    await expect(z).resolves.toBe('z!');
  });

  it('caps a commit at maxBatch items', async () => {
    const { calls, flush } = manualFlush();
    const group = new TenantGroupCommit(flush, 2);
    const all = ['a', 'b', 'c', 'd', 'e'].map((i) => group.submit('t', i));
    for (let i = 0; i < 3; i++) {
      calls[i].finish();
      await settle();
    }
    await Promise.all(all);
    expect(calls.map((c) => c.items)).toEqual([['a'], ['b', 'c'], ['d', 'e']]);
  });
});

describe('KeyedQueue', () => {
  it('runs one key in arrival order, one at a time, and other keys beside it', async () => {
    const q = new KeyedQueue();
    const log: string[] = [];
    const gates: Record<string, () => void> = {};
    const task = (name: string) => () =>
      new Promise<string>((resolve) => {
        log.push(`start ${name}`);
        gates[name] = () => {
          log.push(`end ${name}`);
          resolve(name);
        };
      });
    const a1 = q.run('a', task('a1'));
    const a2 = q.run('a', task('a2'));
    const b1 = q.run('b', task('b1'));
    await settle();
    expect(log).toEqual(['start a1', 'start b1']);
    gates.a1();
    await a1;
    await settle();
    expect(log).toEqual(['start a1', 'start b1', 'end a1', 'start a2']);
    gates.a2();
    gates.b1();
    await expect(Promise.all([a2, b1])).resolves.toEqual(['a2', 'b1']);
    await settle();
    expect(q.size).toBe(0);
  });

  it('goes on after a task fails, and the failure reaches its caller', async () => {
    const q = new KeyedQueue();
    const failed = q.run('k', () => Promise.reject(new Error('boom')));
    const next = q.run('k', () => Promise.resolve('next'));
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe('next');
  });
});
