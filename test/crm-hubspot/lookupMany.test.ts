import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { packGroups } from '../../src/crm/hubspot/batchReads.js';
import { lookupKey, type CrmAdapter, type DealRule, type Participant } from '../../src/crm/types.js';
import type { HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { adapterFor, counts, FIELDS, sandbox, total } from './helpers.js';
import { populate, TRICKY } from './population.js';

// No request limits (searches included): these tests compare answers, not pacing.
const FAST = { perWindow: 1_000_000, searchesPerSecond: 1_000_000 };
const RULES: (DealRule | undefined)[] = [
  undefined,
  { orderBy: 'amount_desc', limit: 2 },
  { orderBy: 'close_date_desc', limit: 5 },
];

describe('HubSpot lookupMany (real SDK against the sandbox)', () => {
  let sb: HubSpotSandbox;
  let adapter: CrmAdapter;

  beforeAll(async () => {
    sb = await sandbox({ limits: FAST });
    adapter = adapterFor(sb, { limits: FAST });
  });
  afterAll(() => sb.close());
  beforeEach(() => sb.state.reset());

  /** lookupMany over all of `people` against lookup for each, one by one. */
  async function expectSameAsLookup(people: Participant[], rule?: DealRule) {
    const many = await adapter.lookupMany(people, FIELDS, rule);
    expect(many.size).toBe(new Set(people.map((p) => lookupKey(p.email))).size);
    for (const p of people) {
      expect(many.get(lookupKey(p.email)), p.email).toEqual(await adapter.lookup(p, FIELDS, rule));
    }
    return many;
  }

  it('gives every seeded tricky participant exactly what lookup gives, under each deal rule', async () => {
    for (const rule of RULES) {
      const many = await expectSameAsLookup(TRICKY, rule);
      // Each branch is really taken, so the comparison covers it.
      const matched = TRICKY.map((p) => many.get(lookupKey(p.email))?.matchedBy);
      expect(matched).toEqual([
        'email',
        'email',
        'email',
        'domain',
        'domain',
        'none',
        'company_name',
        'company_name',
        'none',
        'company_name',
      ]);
    }
  });

  it('gives ~290 participants (several IN chunks, www domains, owner list) what lookup gives', async () => {
    const people = populate(sb);
    const many = await expectSameAsLookup(people);
    const by = (m: string) => [...many.values()].filter((l) => l.matchedBy === m).length;
    expect(by('email')).toBeGreaterThan(150);
    expect(by('domain')).toBeGreaterThan(60);
    expect(by('company_name')).toBeGreaterThan(15);
    expect(many.get('visitor7@gen7.example')?.company?.properties.domain).toBe('www.gen7.example');
  }, 120_000);

  it('reads a hundred participants in a handful of requests', async () => {
    const people = populate(sb).slice(0, 100);
    sb.state.requests.clear();
    const many = await adapter.lookupMany(people, FIELDS);
    expect(many.size).toBe(100);
    const c = counts(sb);
    expect(c['POST /crm/objects/2026-09/contacts/search']).toBe(1);
    expect(c['POST /crm/associations/2026-09/contacts/companies/batch/read']).toBe(1);
    expect(c['POST /crm/associations/2026-09/contacts/deals/batch/read']).toBe(1);
    expect(c['GET /crm/owners/2026-09']).toBe(1); // eight owners: one page of the list, no single reads
    expect(total(sb)).toBeLessThanOrEqual(12);
  });

  it('never searches companies by a free-mail domain', async () => {
    const many = await adapter.lookupMany([{ email: 'sam@gmail.com' }, { email: 'ann@Hotmail.com' }], FIELDS);
    expect([...many.values()].map((l) => l.matchedBy)).toEqual(['none', 'none']);
    expect(counts(sb)['POST /crm/objects/2026-09/companies/search'] ?? 0).toBe(0);
  });

  it('follows the association paging of a contact with more than one page of deals', async () => {
    const { store, refs } = sb.state;
    for (let i = 0; i < 520; i++) {
      const id = store.create('deals', {
        dealname: `Bulk ${i}`,
        dealstage: 'qualifiedtobuy',
        amount: String(i),
        closedate: '2026-06-01T00:00:00.000Z',
      }).id;
      store.associate('contacts', refs.contacts.jane, 'deals', id, 4, 3);
    }
    sb.state.requests.clear();
    const [jane] = TRICKY;
    const many = await expectSameAsLookup([jane!], { orderBy: 'amount_desc', limit: 3 });
    expect(many.get('jane.doe@acme.example')?.deals.map((d) => d.properties.dealname)).toEqual([
      'Acme - Expansion',
      'Acme - Renewal',
      'Acme - Add-on',
    ]);
    // Two pages, once for lookupMany and once for lookup (both read associations in batches).
    expect(counts(sb)['POST /crm/associations/2026-09/contacts/deals/batch/read']).toBe(4);
  });

  it('answers an empty batch without a request', async () => {
    expect((await adapter.lookupMany([], FIELDS)).size).toBe(0);
    expect(total(sb)).toBe(0);
  });

  it('packs search values so that no group straddles two requests', () => {
    const groups = Array.from({ length: 70 }, (_, i) => ({ key: `d${i}`, values: [`d${i}`, `www.d${i}`] }));
    const chunks = packGroups(groups, 100);
    expect(chunks.map((c) => c.length)).toEqual([50, 20]);
    expect(chunks.flat()).toEqual(groups);
    expect(packGroups([], 100)).toEqual([]);
  });
});
