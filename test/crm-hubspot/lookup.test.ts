import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CrmAdapter } from '../../src/crm/types.js';
import type { HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { adapterFor, counts, FIELDS, sandbox } from './helpers.js';

describe('HubSpot adapter lookup (real SDK against the sandbox)', () => {
  let sb: HubSpotSandbox;
  let adapter: CrmAdapter;

  beforeAll(async () => {
    sb = await sandbox();
    adapter = adapterFor(sb);
  });
  afterAll(() => sb.close());
  beforeEach(() => sb.state.requests.clear());

  const dealNames = (deals: { properties: Record<string, unknown> }[]) =>
    deals.map((d) => d.properties.dealname);

  it('finds a contact by email, its company, its open deals soonest first (tie by last modified), and owner', async () => {
    const r = await adapter.lookup({ email: 'jane.doe@acme.example' }, FIELDS);
    expect(r.matchedBy).toBe('email');
    expect(r.contact).toMatchObject({ type: 'contact', id: sb.state.refs.contacts.jane });
    expect(r.contact?.properties).toMatchObject({ firstname: 'Jane', lastname: 'Doe' });
    expect(r.company).toMatchObject({ type: 'company', id: sb.state.refs.companies.acme });
    expect(r.company?.properties.name).toBe('Acme Corp');
    // Add-on and Renewal share 2026-02-15; Add-on was modified later. Pilot (won) and Lost are closed.
    expect(dealNames(r.deals)).toEqual([
      'Acme - Add-on',
      'Acme - Renewal',
      'Acme - Expansion',
      'Acme - Someday',
    ]);
    expect(r.owner).toMatchObject({ type: 'owner', properties: { email: 'olivia.owner@seller.example' } });
    // search, 2 association reads, company, deals, owner
    expect(Object.values(counts(sb)).reduce((a, b) => a + b, 0)).toBe(6);
  });

  it('matches an email in any case to the lower-case stored contact', async () => {
    const r = await adapter.lookup({ email: '  Bob.Smith@ACME.example ' }, FIELDS);
    expect(r.matchedBy).toBe('email');
    expect(r.contact?.id).toBe(sb.state.refs.contacts.bob);
    expect(r.contact?.properties.email).toBe('bob.smith@acme.example');
  });

  it("gives two contacts of one company the same company; Bob, without deals of his own, gets the company's", async () => {
    const jane = await adapter.lookup({ email: 'jane.doe@acme.example' }, FIELDS);
    const bob = await adapter.lookup({ email: 'bob.smith@acme.example' }, FIELDS);
    expect(bob.company?.id).toBe(jane.company?.id);
    expect(dealNames(bob.deals)).toEqual(dealNames(jane.deals));
    expect(bob.owner?.properties.email).toBe('mark.manager@seller.example');
  });

  it('honours other deal rules and the limit', async () => {
    const p = { email: 'jane.doe@acme.example' };
    const byAmount = await adapter.lookup(p, FIELDS, { orderBy: 'amount_desc', limit: 2 });
    expect(dealNames(byAmount.deals)).toEqual(['Acme - Expansion', 'Acme - Renewal']);
    const latest = await adapter.lookup(p, FIELDS, { orderBy: 'close_date_desc', limit: 5 });
    expect(dealNames(latest.deals)).toEqual([
      'Acme - Expansion',
      'Acme - Add-on',
      'Acme - Renewal',
      'Acme - Someday',
    ]);
  });

  it('finds the company by email domain when there is no contact', async () => {
    const r = await adapter.lookup({ email: 'newperson@initech.example' }, FIELDS);
    expect(r).toMatchObject({ contact: null, matchedBy: 'domain' });
    expect(r.company?.properties.name).toBe('Initech');
    expect(dealNames(r.deals)).toEqual(['Initech - Trial']);
    expect(r.owner?.properties.email).toBe('mark.manager@seller.example');
  });

  it('resolves a would-be lead by its domain (HubSpot has no leads)', async () => {
    const r = await adapter.lookup({ email: 'lena.lead@globex.example', name: 'Lena Lead' }, FIELDS);
    expect(r).toMatchObject({ contact: null, matchedBy: 'domain' });
    expect(r.company?.id).toBe(sb.state.refs.companies.globex);
  });

  it('never matches a free-mail domain to a company, even one with that domain', async () => {
    const r = await adapter.lookup({ email: 'sam@gmail.com' }, FIELDS);
    expect(r).toMatchObject({ contact: null, company: null, deals: [], owner: null, matchedBy: 'none' });
    expect(counts(sb)['POST /crm/objects/2026-09/companies/search'] ?? 0).toBe(0);
  });

  it('falls back to the company name (free-mail address, named company)', async () => {
    const r = await adapter.lookup({ email: 'gavin@yahoo.com', company: 'hooli' }, FIELDS);
    expect(r.matchedBy).toBe('company_name');
    expect(r.company?.id).toBe(sb.state.refs.companies.hooli);
    expect(r.deals).toEqual([]);
  });

  it('excludes closed-lost deals and finds the contact of another company', async () => {
    const r = await adapter.lookup({ email: 'dana@umbrella.example' }, FIELDS);
    expect(r.company?.properties.name).toBe('Umbrella Inc');
    expect(dealNames(r.deals)).toEqual(['Umbrella - Security Suite']);
  });

  it('reports nothing for an unknown person at an unknown domain', async () => {
    const r = await adapter.lookup({ email: 'nobody@nowhere.example' }, FIELDS);
    expect(r).toMatchObject({ contact: null, company: null, deals: [], owner: null, matchedBy: 'none' });
  });
});
