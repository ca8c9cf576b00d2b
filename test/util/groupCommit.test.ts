import { describe, expect, it } from 'vitest';
import { createGroupCommit } from '../../src/util/groupCommit.js';

describe('createGroupCommit', () => {
  it('flushes a lone item at once, and items that arrive during a flush together in the next', async () => {
    const batches: number[][] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const commits = createGroupCommit<number, string>(
      async (items) => {
        batches.push(items);
        if (items[0] === 1) await gate;
        return items.map((n) => `ok ${n}`);
      },
      { maxBatch: 3 },
    );
    const first = commits.submit(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1]]);
    const later = [2, 3, 4, 5].map((n) => commits.submit(n));
    release();
    expect(await Promise.all([first, ...later])).toEqual(['ok 1', 'ok 2', 'ok 3', 'ok 4', 'ok 5']);
    // At most maxBatch per flush, in arrival order.
    expect(batches).toEqual([[1], [2, 3, 4], [5]]);
  });

  it('with two flushes at once, builds the next batch during one, never with a key already in flight', async () => {
    type Item = { call: string; n: number };
    const batches: number[][] = [];
    const gates = new Map<number, () => void>();
    const commits = createGroupCommit<Item, number>(
      async (items) => {
        batches.push(items.map((i) => i.n));
        // Each flush is held until the test lets it go.
        await new Promise<void>((resolve) => gates.set(items[0]!.n, resolve));
        return items.map((i) => i.n);
      },
      { maxBatch: 10, maxInFlight: 2, keyOf: (i) => i.call },
    );
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    const a1 = commits.submit({ call: 'a', n: 1 });
    await turn();
    // a's later events wait for its first; b goes in a second flush beside it. (Events of one key
    // may share a batch, which applies them in order: the inbox's rounds.)
    const rest = [
      commits.submit({ call: 'a', n: 2 }),
      commits.submit({ call: 'b', n: 3 }),
      commits.submit({ call: 'a', n: 4 }),
    ];
    await turn();
    expect(batches).toEqual([[1], [3]]);
    gates.get(3)!();
    await turn();
    await turn();
    expect(batches).toEqual([[1], [3]]);
    gates.get(1)!();
    await turn();
    await turn();
    expect(batches).toEqual([[1], [3], [2, 4]]);
    gates.get(2)!();
    expect(await Promise.all([a1, ...rest])).toEqual([1, 2, 3, 4]);
  });

  it('rejects every item of a failed flush, and goes on with the next batch', async () => {
    const commits = createGroupCommit<number, number>(
      async (items) => {
        if (items.includes(2)) throw new Error('disk full');
        return items;
      },
      { maxBatch: 10 },
    );
    const results = await Promise.allSettled([1, 2].map((n) => commits.submit(n)));
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(await commits.submit(3)).toBe(3);
  });
});
