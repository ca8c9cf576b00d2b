import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSalesforceAdapter, type SalesforceAdapter } from '../../src/crm/salesforce/index.js';
import { packTerms } from '../../src/crm/salesforce/soqlBatch.js';
import { lookupKey, type DealRule, type Participant } from '../../src/crm/types.js';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { adminPost, FIELDS, QUERY, sandboxConfig, testJwtKeys } from './helpers.js';
import { populate, TRICKY } from './population.js';

let sb: SalesforceSandbox;
let adapter: SalesforceAdapter;

beforeAll(async () => {
  sb = await startSalesforceSandbox({ jwtKeys: testJwtKeys(), apiLimit: 1_000_000 });
});
afterAll(async () => {
  await sb.close();
});
beforeEach(async () => {
  await adminPost(sb, 'reset');
  sb.state.queryBatchSize = 2000;
  adapter = createSalesforceAdapter({ config: sandboxConfig(sb) });
});

const RULES: (DealRule | undefined)[] = [
  undefined,
  { orderBy: 'amount_desc', limit: 2 },
  { orderBy: 'close_date_desc', limit: 5 },
  { orderBy: 'last_modified_desc', limit: 1 },
];

/** lookupMany over all of `people` against lookup for each, one by one. */
async function expectSameAsLookup(people: Participant[], rule?: DealRule, fields = FIELDS) {
  const many = await adapter.lookupMany(people, fields, rule);
  expect(many.size).toBe(new Set(people.map((p) => lookupKey(p.email))).size);
  const seen = new Set<string>();
  for (const p of people) {
    if (seen.has(lookupKey(p.email))) continue; // the first participant of an address is the one
    seen.add(lookupKey(p.email));
    expect(many.get(lookupKey(p.email)), p.email).toEqual(await adapter.lookup(p, fields, rule));
  }
  return many;
}

const queries = () => sb.state.count({ pathContains: '/query' });

describe('Salesforce lookupMany', () => {
  it('gives every seeded tricky participant exactly what lookup gives, under each deal rule', async () => {
    for (const rule of RULES) {
      const many = await expectSameAsLookup(TRICKY, rule);
      expect(TRICKY.map((p) => many.get(lookupKey(p.email))?.matchedBy)).toEqual([
        'email',
        'email',
        'email',
        'domain',
        'email',
        'lead_email',
        'domain',
        'none',
        'company_name',
        'none',
        'company_name',
      ]);
    }
  });

  it('gives ~290 participants (twins, leads, look-alike Websites, limits) what lookup gives', async () => {
    const people = populate(sb);
    const many = await expectSameAsLookup(people);
    const by = (m: string) => [...many.values()].filter((l) => l.matchedBy === m).length;
    expect(by('email')).toBeGreaterThan(150);
    expect(by('lead_email')).toBeGreaterThan(30);
    expect(by('domain')).toBeGreaterThan(40);
    expect(by('company_name')).toBeGreaterThan(15);
    expect(many.get('twin@gen1.example')?.contact?.properties.FirstName).toBe('Newer');
    expect(many.get('someone@bigco.example')?.matchedBy).toBe('none');
    expect(many.get('x@gen3.example')?.company?.properties.Name).toBe('Gen Co 3');
    expect(many.get('queued@leads.example')?.owner).toBeNull();
  }, 120_000);

  it('matches lookup without owner fields and with another rule, on the whole population', async () => {
    const people = populate(sb);
    await expectSameAsLookup(people, { orderBy: 'amount_desc', limit: 3 }, { ...FIELDS, owner: [] });
  }, 120_000);

  it('reads a hundred participants in at most six queries', async () => {
    const people = populate(sb).slice(0, 100);
    const before = queries();
    expect((await adapter.lookupMany(people, FIELDS)).size).toBe(100);
    expect(queries() - before).toBeLessThanOrEqual(6);
  });

  it('follows query pages (7 rows each) and still gives what lookup gives', async () => {
    const people = populate(sb);
    sb.state.queryBatchSize = 7;
    const many = await adapter.lookupMany(people, FIELDS, { orderBy: 'close_date_asc', limit: 200 });
    sb.state.queryBatchSize = 2000;
    for (const p of people.slice(0, 40)) {
      expect(many.get(lookupKey(p.email)), p.email).toEqual(
        await adapter.lookup(p, FIELDS, { orderBy: 'close_date_asc', limit: 200 }),
      );
    }
  });

  it('never queries accounts by a free-mail domain and answers an empty batch without a request', async () => {
    const before = queries();
    expect((await adapter.lookupMany([], FIELDS)).size).toBe(0);
    expect(queries()).toBe(before);
    const many = await adapter.lookupMany([{ email: 'sam@gmail.com' }, { email: 'ann@Hotmail.com' }], FIELDS);
    expect([...many.values()].map((l) => l.matchedBy)).toEqual(['none', 'none']);
    const accountQueries = sb.state.recentRequests().filter((r) => r.path.startsWith(QUERY)).length;
    expect(accountQueries).toBe(2); // contacts and leads only
  });

  it('packs terms so that every query stays within the length and count limits', () => {
    const soql = (terms: string) => `SELECT Id FROM Contact WHERE Email IN (${terms})`;
    const terms = Array.from({ length: 500 }, (_, i) => ({
      key: `k${i}`,
      term: `'someone.with.a.long.address.${i}@example.com'`,
    }));
    const chunks = packTerms(terms, { soql, joiner: ', ' }, 4000, 200);
    expect(chunks.flat()).toEqual(terms);
    for (const c of chunks) {
      expect(encodeURIComponent(soql(c.map((t) => t.term).join(', '))).length).toBeLessThanOrEqual(4000);
    }
    expect(chunks.length).toBeGreaterThan(5);
    expect(packTerms(terms, { soql, joiner: ', ' }, 1_000_000, 200).map((c) => c.length)).toEqual([
      200, 200, 100,
    ]);
  });
});
