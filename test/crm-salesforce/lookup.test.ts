import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSalesforceAdapter, type SalesforceAdapter } from '../../src/crm/salesforce/index.js';
import { CrmRejectedError, CrmTransientError } from '../../src/crm/errors.js';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { adminPost, FIELDS, QUERY, requestCounts, sandboxConfig, testJwtKeys } from './helpers.js';

let sb: SalesforceSandbox;
let adapter: SalesforceAdapter;

beforeAll(async () => {
  sb = await startSalesforceSandbox({ jwtKeys: testJwtKeys() });
});
afterAll(async () => {
  await sb.close();
});
beforeEach(async () => {
  await adminPost(sb, 'reset');
  adapter = createSalesforceAdapter({ config: sandboxConfig(sb) });
});

const dealNames = (deals: { properties: Record<string, unknown> }[]) => deals.map((d) => d.properties.Name);

describe('Salesforce lookup', () => {
  it('finds a contact by an upper-case email, with account, open deals in rule order and owner, in 2 requests', async () => {
    const found = await adapter.lookup({ email: 'Bob.Smith@ACME.example' }, FIELDS);
    expect(found.matchedBy).toBe('email');
    expect(found.contact).toMatchObject({
      type: 'contact',
      properties: { FirstName: 'Bob', LastName: 'Smith', Email: 'bob.smith@acme.example' },
    });
    expect(found.company).toMatchObject({
      type: 'company',
      properties: { Name: 'Acme Corp', Website: 'acme.example' },
    });
    // Two open deals close on 2026-02-15: the more recently modified (Pilot) comes first.
    // Closed Won "Acme - Platform" and Closed Lost "Acme - Legacy" close earlier but are excluded.
    expect(dealNames(found.deals)).toEqual(['Acme - Pilot', 'Acme - Expansion', 'Acme - Renewal']);
    expect(found.owner).toMatchObject({ type: 'owner', properties: { Name: 'Max Seller' } });
    expect((await requestCounts(sb)).counts[`GET ${QUERY}`]).toBe(2);
    expect(adapter.usage().requests).toBe(2);
  });

  it('tells two contacts at one account apart, each with their own owner', async () => {
    const jane = await adapter.lookup({ email: 'jane.doe@acme.example' }, FIELDS);
    const bob = await adapter.lookup({ email: 'bob.smith@acme.example' }, FIELDS);
    expect(jane.contact?.properties.FirstName).toBe('Jane');
    expect(jane.owner?.properties.Name).toBe('Olivia Owner');
    expect(jane.contact?.id).not.toBe(bob.contact?.id);
    expect(jane.company?.id).toBe(bob.company?.id);
  });

  it('escapes quotes: finds an email containing one, and a crafted email matches nothing', async () => {
    const pat = await adapter.lookup({ email: "pat.o'neil@acme.example" }, FIELDS);
    expect(pat.contact?.properties.LastName).toBe("O'Neil");
    const crafted = await adapter.lookup({ email: "x' OR LastName != 'y@acme.example" }, FIELDS);
    expect(crafted.contact).toBeNull();
    expect(crafted.matchedBy).toBe('domain');
  });

  it('falls back to a lead when there is no contact', async () => {
    const found = await adapter.lookup({ email: 'LENA.lead@globex.example' }, FIELDS);
    expect(found.matchedBy).toBe('lead_email');
    expect(found.contact).toMatchObject({
      type: 'lead',
      properties: { Company: 'Globex', LastName: 'Lead' },
    });
    expect(found.company).toBeNull();
    expect(found.deals).toEqual([]);
    expect(found.owner?.properties.Name).toBe('Max Seller');
  });

  it('finds the account by email domain when nobody is on record (Website www.initech.example)', async () => {
    const found = await adapter.lookup({ email: 'newperson@initech.example' }, FIELDS);
    expect(found.matchedBy).toBe('domain');
    expect(found.contact).toBeNull();
    expect(found.company?.properties.Name).toBe('Initech');
    expect(dealNames(found.deals)).toEqual(['Initech - TPS Reports']);
    expect(found.owner?.properties.Name).toBe('Max Seller');
  });

  it('never matches an account by a free-mail domain', async () => {
    const found = await adapter.lookup({ email: 'sam@gmail.com' }, FIELDS);
    expect(found).toMatchObject({ contact: null, company: null, deals: [], owner: null, matchedBy: 'none' });
    const counts = (await requestCounts(sb)).counts;
    expect(counts[`GET ${QUERY}`]).toBe(2); // contact and lead only: no account search by gmail.com
  });

  it('finds an account by company name, case-insensitively', async () => {
    const found = await adapter.lookup({ email: 'pat@hooli-mail.example', company: 'hooli' }, FIELDS);
    expect(found.matchedBy).toBe('company_name');
    expect(found.company?.properties.Name).toBe('Hooli');
    expect(found.owner?.properties.Name).toBe('Olivia Owner');
  });

  it('orders deals by the rule given, with its limit', async () => {
    const byAmount = await adapter.lookup({ email: 'jane.doe@acme.example' }, FIELDS, {
      orderBy: 'amount_desc',
      limit: 2,
    });
    expect(dealNames(byAmount.deals)).toEqual(['Acme - Expansion', 'Acme - Renewal']);
    const latest = await adapter.lookup({ email: 'dana@umbrella.example' }, FIELDS, {
      orderBy: 'close_date_desc',
      limit: 5,
    });
    expect(dealNames(latest.deals)).toEqual(['Umbrella - Outbreak Response', 'Umbrella - Lab Supplies']);
  });

  it('follows nextRecordsUrl when the sandbox pages results', async () => {
    sb.state.queryBatchSize = 2;
    try {
      const found = await adapter.lookup({ email: 'bob.smith@acme.example' }, FIELDS);
      expect(found.deals).toHaveLength(3);
      const more = Object.keys((await requestCounts(sb)).counts).filter((k) => k.startsWith(`GET ${QUERY}/`));
      expect(more).toHaveLength(1);
    } finally {
      sb.state.queryBatchSize = 2000;
    }
  });

  it('maps an unknown mapped field to CrmRejectedError naming the field', async () => {
    const err = await adapter
      .lookup({ email: 'bob.smith@acme.example' }, { ...FIELDS, contact: ['Shoe_Size__c'] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmRejectedError);
    expect((err as CrmRejectedError).fields).toEqual(['Shoe_Size__c']);
  });

  it('turns a 503 on a query into CrmTransientError after one attempt (no hidden SDK retries)', async () => {
    await adminPost(sb, 'faults', { count: 1, status: 503, method: 'GET', pathContains: '/query' });
    const err = await adapter.lookup({ email: 'bob.smith@acme.example' }, FIELDS).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmTransientError);
    expect((await requestCounts(sb)).counts[`GET ${QUERY}`]).toBe(1);
  });
});
