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

function fakeCrm(options: { batch?: boolean; failBatch?: boolean } = {}) {
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
            return new Map(ps.map((p) => [p.email.toLowerCase(), result(`batch:${p.email.toLowerCase()}`)]));
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
    const cache = createLookupCache({ crm, mapping, clock, ttlMs: 1000 });
    await Promise.all([cache.get({ email: 'A@x.example' }), cache.get({ email: 'a@x.example' })]);
    expect(calls.single).toEqual(['A@x.example']);
    await clock.advance(1001);
    await cache.get({ email: 'a@x.example' });
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
    const cache = createLookupCache({ crm, mapping, clock: new FakeClock() });
    await cache.prefetch([{ email: 'a@x.example' }, { email: 'b@x.example' }]);
    const a = await cache.get({ email: 'a@x.example' });
    expect(a.contact?.id).toBe('single:a@x.example');
    expect(calls.single).toEqual(['a@x.example']);
  });
});
