import { describe, expect, it } from 'vitest';
import type { CrmAdapter, CrmLookup, Participant } from '../../src/crm/types.js';
import { loadMappings } from '../../src/mapping/index.js';
import { createLookupCache } from '../../src/pipelines/lookupCache.js';
import { FakeClock } from '../../src/util/fakeClock.js';

const mapping = loadMappings('config', 'hubspot');
const result = (id: string): CrmLookup => ({
  contact: { type: 'contact', id, properties: {} },
  company: null,
  deals: [],
  owner: null,
  matchedBy: 'email',
});

function fakeCrm(options: { batch?: boolean; failBatch?: boolean; omit?: string } = {}) {
  const calls = { single: [] as string[], batch: [] as string[][] };
  const crm = {
    name: 'hubspot',
    lookup: async (p: Participant) => {
      calls.single.push(p.email);
      return result(`single:${p.email.toLowerCase()}`);
    },
    ...(options.batch
      ? {
          lookupMany: async (ps: Participant[]) => {
            calls.batch.push(ps.map((p) => p.email));
            if (options.failBatch) throw new Error('batch down');
            const found = ps.filter((p) => p.email !== options.omit);
            return new Map(
              found.map((p) => [p.email.toLowerCase(), result(`batch:${p.email.toLowerCase()}`)]),
            );
          },
        }
      : {}),
  } as unknown as CrmAdapter;
  return { crm, calls };
}

describe('lookup cache', () => {
  it('asks the CRM once per participant within the TTL, again after it', async () => {
    const clock = new FakeClock();
    const { crm, calls } = fakeCrm();
    const cache = createLookupCache({ crm, mapping, clock, ttlMs: 1000, coalesceMs: 5 });
    const both = Promise.all([cache.get({ email: 'A@x.example' }), cache.get({ email: 'a@x.example' })]);
    await clock.advance(5);
    await both;
    expect(calls.single).toEqual(['A@x.example']);
    await clock.advance(1001);
    const again = cache.get({ email: 'a@x.example' });
    await clock.advance(5);
    await again;
    expect(calls.single).toHaveLength(2);
  });

  it('prefetches a batch in one request and serves gets from it', async () => {
    const { crm, calls } = fakeCrm({ batch: true });
    const cache = createLookupCache({ crm, mapping, clock: new FakeClock() });
    await cache.prefetch([{ email: 'a@x.example' }, { email: 'b@x.example' }, { email: 'a@x.example' }]);
    const b = await cache.get({ email: 'b@x.example' });
    expect(calls.batch).toEqual([['a@x.example', 'b@x.example']]);
    expect(calls.single).toEqual([]);
    expect(b.contact?.id).toBe('batch:b@x.example');
  });

  it('falls back to single lookups when the batch fails', async () => {
    const { crm, calls } = fakeCrm({ batch: true, failBatch: true });
    const clock = new FakeClock();
    const cache = createLookupCache({ crm, mapping, clock, coalesceMs: 0 });
    await cache.prefetch([{ email: 'a@x.example' }, { email: 'b@x.example' }]);
    const a = cache.get({ email: 'a@x.example' });
    await clock.advance(0);
    expect((await a).contact?.id).toBe('single:a@x.example');
    expect(calls.single).toEqual(['a@x.example']);
  });
  it('holds only unexpired lookups under a steady stream of new participants', async () => {
    const clock = new FakeClock();
    const { crm } = fakeCrm();
    const cache = createLookupCache({ crm, mapping, clock, ttlMs: 60_000, coalesceMs: 0, maxEntries: 1_000 });
    // One new person every 2 s for an hour: 1,800 lookups, 30 of them within the TTL at any time.
    for (let i = 0; i < 1_800; i++) {
      const got = cache.get({ email: `person.${i}@x.example` });
      await clock.advance(0);
      await got;
      await clock.advance(2_000);
    }
    expect(cache.size()).toBeLessThanOrEqual(31);
  });

  it('keeps a refreshed lookup when an older one for the same person expires', async () => {
    const clock = new FakeClock();
    const { crm, calls } = fakeCrm();
    const cache = createLookupCache({ crm, mapping, clock, ttlMs: 1_000, coalesceMs: 0 });
    const first = cache.get({ email: 'a@x.example' });
    await clock.advance(0);
    await first;
    await clock.advance(600);
    const other = cache.get({ email: 'b@x.example' });
    await clock.advance(0);
    await other;
    await clock.advance(600); // a: expired; b: 600 ms old
    const again = cache.get({ email: 'a@x.example' });
    await clock.advance(0);
    await again;
    await clock.advance(300);
    const b = cache.get({ email: 'b@x.example' });
    const a = cache.get({ email: 'a@x.example' });
    await clock.advance(0);
    await Promise.all([a, b]);
    expect(calls.single).toEqual(['a@x.example', 'b@x.example', 'a@x.example']);
    expect(cache.size()).toBe(2);
  });
});

describe('lookup cache: live lookups arriving together share one batch lookup', () => {
  it('falls back to single lookups when the batch lookup throws at once, inside the timer', async () => {
    const clock = new FakeClock();
    const { crm, calls } = fakeCrm();
    crm.lookupMany = () => {
      throw new Error('not a promise');
    };
    const cache = createLookupCache({ crm, mapping, clock, coalesceMs: 10 });
    const answers = Promise.all([cache.get({ email: 'a@x.example' }), cache.get({ email: 'b@x.example' })]);
    await clock.advance(10);
    expect((await answers).map((r) => r.contact?.id)).toEqual(['single:a@x.example', 'single:b@x.example']);
    expect(calls.single).toEqual(['a@x.example', 'b@x.example']);
  });

  const people = ['a@x.example', 'b@x.example', 'c@x.example'].map((email) => ({ email }));

  it('gathers the lookups of one window into one lookupMany, and each gets its own answer', async () => {
    const clock = new FakeClock();
    const { crm, calls } = fakeCrm({ batch: true });
    const cache = createLookupCache({ crm, mapping, clock, coalesceMs: 10 });
    const answers = Promise.all(people.map((p) => cache.get(p)));
    await clock.advance(9);
    expect(calls.batch).toEqual([]);
    await clock.advance(1);
    expect((await answers).map((r) => r.contact?.id)).toEqual([
      'batch:a@x.example',
      'batch:b@x.example',
      'batch:c@x.example',
    ]);
    expect(calls.batch).toEqual([['a@x.example', 'b@x.example', 'c@x.example']]);
    expect(calls.single).toEqual([]);
    // Cached: asking again within the TTL costs nothing, and no timer is left waiting.
    await cache.get({ email: 'B@x.example' });
    expect(calls.batch).toHaveLength(1);
    expect(clock.pending()).toBe(0);
  });

  it('starts a new batch after the window closed; a lone lookup is a batch of one', async () => {
    const clock = new FakeClock();
    const { crm, calls } = fakeCrm({ batch: true });
    const cache = createLookupCache({ crm, mapping, clock, coalesceMs: 10 });
    const first = Promise.all(people.slice(0, 2).map((p) => cache.get(p)));
    await clock.advance(10);
    await first;
    const late = cache.get(people[2]!);
    await clock.advance(10);
    expect((await late).contact?.id).toBe('batch:c@x.example');
    expect(calls).toEqual({ batch: [['a@x.example', 'b@x.example'], ['c@x.example']], single: [] });
  });

  it('sends a full batch at once, without waiting for the window', async () => {
    const clock = new FakeClock();
    const { crm, calls } = fakeCrm({ batch: true });
    const cache = createLookupCache({ crm, mapping, clock, coalesceMs: 10, maxBatch: 2 });
    const answers = Promise.all(people.map((p) => cache.get(p)));
    await clock.advance(0);
    expect(calls.batch).toEqual([['a@x.example', 'b@x.example']]);
    await clock.advance(10);
    await answers;
    expect(calls.batch).toEqual([['a@x.example', 'b@x.example'], ['c@x.example']]);
  });

  it('while batches are under way, later lookups gather for the next one instead of starting their own', async () => {
    const clock = new FakeClock();
    const asked: string[][] = [];
    const pending: (() => void)[] = [];
    const crm = {
      name: 'hubspot',
      lookup: async () => {
        throw new Error('no single lookups expected');
      },
      lookupMany: (ps: Participant[]) => {
        asked.push(ps.map((p) => p.email));
        return new Promise<Map<string, CrmLookup>>((resolve) =>
          pending.push(() => resolve(new Map(ps.map((p) => [p.email, result(`batch:${p.email}`)])))),
        );
      },
    } as unknown as CrmAdapter;
    const cache = createLookupCache({ crm, mapping, clock, coalesceMs: 10, maxInFlight: 1 });
    const first = cache.get({ email: 'a@x.example' });
    await clock.advance(10);
    expect(asked).toEqual([['a@x.example']]);
    // Three more arrive, each after its own window, while the first batch is still out.
    const later = ['b', 'c', 'd'].map((n) => cache.get({ email: `${n}@x.example` }));
    await clock.advance(30);
    expect(asked).toHaveLength(1);
    pending.shift()!();
    await first;
    await clock.advance(0);
    expect(asked).toEqual([['a@x.example'], ['b@x.example', 'c@x.example', 'd@x.example']]);
    pending.shift()!();
    expect((await Promise.all(later)).map((r) => r.contact?.id)).toEqual([
      'batch:b@x.example',
      'batch:c@x.example',
      'batch:d@x.example',
    ]);
  });

  it('falls back to single lookups when the batch fails, and forgets nothing it should keep', async () => {
    const clock = new FakeClock();
    const { crm, calls } = fakeCrm({ batch: true, failBatch: true });
    const cache = createLookupCache({ crm, mapping, clock, coalesceMs: 10 });
    const answers = Promise.all(people.map((p) => cache.get(p)));
    await clock.advance(10);
    expect((await answers).map((r) => r.contact?.id)).toEqual([
      'single:a@x.example',
      'single:b@x.example',
      'single:c@x.example',
    ]);
    expect(calls.batch).toHaveLength(1);
    // The single answers are cached like any other.
    await cache.get(people[0]!);
    expect(calls.single).toHaveLength(3);
  });

  it('looks up singly whom the batch left out, and a second company at the same address', async () => {
    const clock = new FakeClock();
    const { crm, calls } = fakeCrm({ batch: true, omit: 'b@x.example' });
    const cache = createLookupCache({ crm, mapping, clock, coalesceMs: 10 });
    const answers = Promise.all([
      cache.get({ email: 'a@x.example', company: 'Acme' }),
      cache.get({ email: 'a@x.example', company: 'Globex' }),
      cache.get({ email: 'b@x.example' }),
    ]);
    await clock.advance(10);
    expect((await answers).map((r) => r.contact?.id)).toEqual([
      'batch:a@x.example',
      'single:a@x.example',
      'single:b@x.example',
    ]);
    expect(calls.batch).toEqual([['a@x.example', 'b@x.example']]);
    expect(calls.single).toEqual(['a@x.example', 'b@x.example']);
  });
});
