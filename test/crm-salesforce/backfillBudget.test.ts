import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSalesforceAdapter, type SalesforceAdapter } from '../../src/crm/salesforce/index.js';
import {
  lookupKey,
  type ActivityWrite,
  type CrmLookup,
  type FollowupWrite,
  type Participant,
} from '../../src/crm/types.js';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { FIELDS, sandboxConfig, testJwtKeys } from './helpers.js';
import { populate } from './population.js';

const CALLS = 1000;
const BATCH = 100;

/**
 * The budget: a backfill of 1,000 calls costs at most one CRM request per call on
 * average, lookups included. Each write-back batch of 100 calls looks its participants up with
 * one `lookupMany` (no cache across batches, so every batch pays its own lookups), then writes
 * the 100 call Tasks and 100 draft EmailMessages, as the default mapping does.
 */
describe('Salesforce backfill request budget', () => {
  let sb: SalesforceSandbox;
  let adapter: SalesforceAdapter;

  beforeAll(async () => {
    sb = await startSalesforceSandbox({ jwtKeys: testJwtKeys(), apiLimit: 1_000_000 });
    adapter = createSalesforceAdapter({ config: sandboxConfig(sb) });
  });
  afterAll(async () => {
    await sb.close();
  });

  it('backfills 1,000 calls over ~290 distinct participants in at most 1,000 requests', async () => {
    const people = populate(sb);
    // Call i is with participant (37·i mod n): every participant recurs, 100 distinct per batch.
    const participantOf = (i: number): Participant => people[(i * 37) % people.length]!;
    const requests = () => sb.state.count();
    const start0 = requests();

    let lookupRequests = 0;
    for (let start = 0; start < CALLS; start += BATCH) {
      const ids = Array.from({ length: BATCH }, (_, k) => start + k);
      const before = requests();
      const found = await adapter.lookupMany(ids.map(participantOf), FIELDS);
      lookupRequests += requests() - before;
      const lookupOf = (i: number): CrmLookup => found.get(lookupKey(participantOf(i).email))!;
      const activities = await adapter.upsertActivities(ids.map((i) => activity(i, lookupOf(i))));
      const followups = await adapter.upsertFollowups(ids.map((i) => followup(i, lookupOf(i))));
      expect([...activities, ...followups].filter((r) => !r.ok)).toEqual([]);
    }

    const used = requests() - start0;
    // The measured number, for the report (vitest shows it with the test).
    process.stdout.write(
      `Salesforce backfill: ${CALLS} calls, ${new Set(people.map((p) => lookupKey(p.email))).size} distinct ` +
        `participants -> ${used} requests (${lookupRequests} lookup, ${used - lookupRequests} write)` +
        `\n${JSON.stringify(sb.state.requestCounts(), null, 2)}\n`,
    );
    expect(
      sb.state.store.all('Task').filter((t) => String(t.CrmSync_Call_Id__c).startsWith('backfill-')),
    ).toHaveLength(CALLS);
    expect(sb.state.store.all('EmailMessage')).toHaveLength(CALLS);
    expect(adapter.usage().requests).toBe(used);
    expect(used).toBeLessThanOrEqual(CALLS);
  });
});

function links(l: CrmLookup): ActivityWrite['links'] {
  return {
    contactId: l.contact?.id,
    contactType: l.contact ? (l.contact.type === 'lead' ? 'lead' : 'contact') : undefined,
    companyId: l.company?.id,
    dealId: l.deals[0]?.id,
  };
}

function activity(i: number, l: CrmLookup): ActivityWrite {
  const callId = `backfill-${i}`;
  return {
    callId,
    idField: 'CrmSync_Call_Id__c',
    properties: {
      CrmSync_Call_Id__c: callId,
      Subject: `Call ${i}`,
      Description: 'Summary of the call',
      ActivityDate: '2026-01-15',
      CallDurationInSeconds: 1200,
      CrmSync_Score_Overall__c: 70 + (i % 30),
    },
    links: links(l),
  };
}

function followup(i: number, l: CrmLookup): FollowupWrite {
  const draftId = `backfill-draft-${i}`;
  return {
    callId: `backfill-${i}`,
    draftId,
    key: draftId,
    kind: 'email',
    idField: 'CrmSync_Followup_Id__c',
    properties: { CrmSync_Followup_Id__c: draftId, Subject: `Next steps ${i}`, TextBody: 'Hi, …' },
    links: links(l),
  };
}
