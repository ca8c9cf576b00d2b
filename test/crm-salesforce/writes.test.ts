import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CrmDailyLimitError, CrmRejectedError, CrmTransientError } from '../../src/crm/errors.js';
import { DEFAULT_API_VERSION } from '../../src/crm/salesforce/apiVersions.js';
import { createSalesforceAdapter, type SalesforceAdapter } from '../../src/crm/salesforce/index.js';
import type { ActivityWrite, CrmLookup } from '../../src/crm/types.js';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { FakeClock } from '../../src/util/fakeClock.js';
import { adminPost, adminRecords, FIELDS, requestCounts, sandboxConfig, testJwtKeys } from './helpers.js';

let sb: SalesforceSandbox;
let adapter: SalesforceAdapter;
let bob: CrmLookup;

const COLLECTION = `PATCH /services/data/v${DEFAULT_API_VERSION}/composite/sobjects/Task/CrmSync_Call_Id__c`;

beforeAll(async () => {
  sb = await startSalesforceSandbox({ jwtKeys: testJwtKeys() });
});
afterAll(async () => {
  await sb.close();
});
beforeEach(async () => {
  await adminPost(sb, 'reset');
  adapter = createSalesforceAdapter({ config: sandboxConfig(sb) });
  bob = await adapter.lookup({ email: 'bob.smith@acme.example' }, FIELDS);
  sb.state.reset(); // counters from zero for each test; ids of seeded records are stable across resets
});

/** Shaped as the mapping builds it: the key field set in `properties`, TaskSubtype mapped too. */
function callWrite(callId: string, over: Partial<ActivityWrite['properties']> = {}): ActivityWrite {
  return {
    callId,
    idField: 'CrmSync_Call_Id__c',
    properties: {
      CrmSync_Call_Id__c: callId,
      Status: 'Completed',
      TaskSubtype: 'Call',
      Type: 'Call',
      Subject: `Call ${callId}`,
      Description: 'Summary of the call',
      ActivityDate: '2026-01-15',
      CallDurationInSeconds: 1800,
      CallType: 'Outbound',
      CrmSync_Score_Overall__c: 82,
      CrmSync_Objections_Detected__c: 3,
      ...over,
    },
    links: {
      contactId: bob.contact!.id,
      contactType: 'contact',
      companyId: bob.company!.id,
      dealId: bob.deals[0]!.id,
    },
  };
}

describe('Salesforce write-back', () => {
  it('writes the same call three times as one Task, created then updated, linked to contact and deal', async () => {
    const first = await adapter.upsertActivities([callWrite('call-1')]);
    const second = await adapter.upsertActivities([callWrite('call-1', { CrmSync_Score_Overall__c: 85 })]);
    const third = await adapter.upsertActivities([
      callWrite('call-1', { Subject: 'Call call-1 (rescored)', CrmSync_Score_Overall__c: 85 }),
    ]);
    expect(first[0]).toMatchObject({ key: 'call-1', ok: true, created: true });
    expect(second[0]).toMatchObject({ ok: true, created: false });
    expect(third[0]).toMatchObject({ ok: true, created: false });
    const id = first[0]!.ok ? first[0]!.id : '';
    expect(third[0]!.ok && third[0]!.id).toBe(id);

    const tasks = await adminRecords(sb, 'Task');
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({
      Id: id,
      CrmSync_Call_Id__c: 'call-1',
      TaskSubtype: 'Call',
      Status: 'Completed',
      Subject: 'Call call-1 (rescored)',
      CrmSync_Score_Overall__c: 85,
      WhoId: bob.contact!.id,
      WhatId: bob.deals[0]!.id,
      AccountId: bob.company!.id,
    });
    // TaskSubtype is create-only: the adapter remembers the key and leaves it out of updates.
    expect((await requestCounts(sb)).counts[COLLECTION]).toBe(3);
  });

  it('updates a Task written by an earlier process: the refused create-only field is dropped and retried', async () => {
    await adapter.upsertActivities([callWrite('call-1')]);
    const fresh = createSalesforceAdapter({ config: sandboxConfig(sb) });
    const again = await fresh.upsertActivities([callWrite('call-1', { CrmSync_Score_Overall__c: 90 })]);
    expect(again[0]).toMatchObject({ ok: true, created: false });
    expect(await adminRecords(sb, 'Task')).toHaveLength(1);
    expect((await requestCounts(sb)).counts[COLLECTION]).toBe(3);
  });

  it('writes a batch of 450 calls in 200-record requests, and again as updates', async () => {
    const writes = Array.from({ length: 450 }, (_, i) => callWrite(`batch-${i}`));
    const results = await adapter.upsertActivities(writes);
    expect(results.filter((r) => r.ok && r.created)).toHaveLength(450);
    expect(results.map((r) => r.key)).toEqual(writes.map((w) => w.callId));
    let counts = (await requestCounts(sb)).counts;
    expect(counts[COLLECTION]).toBe(3);
    expect(counts[`GET /services/data/v${DEFAULT_API_VERSION}/sobjects/Task/describe`]).toBe(1);
    expect((await requestCounts(sb)).total).toBe(4);

    const replay = await adapter.upsertActivities(writes);
    expect(replay.every((r) => r.ok && !r.created)).toBe(true);
    counts = (await requestCounts(sb)).counts;
    expect(counts[COLLECTION]).toBe(6);
    expect(await adminRecords(sb, 'Task')).toHaveLength(450);
  });

  it('upserts on the id field the mapping names', async () => {
    const write = callWrite('call-x');
    const { CrmSync_Call_Id__c: _omit, ...properties } = write.properties;
    const [res] = await adapter.upsertActivities([
      {
        ...write,
        idField: 'CrmSync_Followup_Id__c',
        properties: { ...properties, crmsync_followup_id__c: 'call-x' },
      },
    ]);
    expect(res).toMatchObject({ key: 'call-x', ok: true, created: true });
    expect(
      (await requestCounts(sb)).counts[
        `${COLLECTION.replace('CrmSync_Call_Id__c', 'CrmSync_Followup_Id__c')}`
      ],
    ).toBe(1);
    const [task] = await adminRecords(sb, 'Task');
    expect(task).toMatchObject({ CrmSync_Followup_Id__c: 'call-x' });
    expect(task).not.toHaveProperty('CrmSync_Call_Id__c');
  });

  it('links a Task on a lead without WhatId', async () => {
    const lena = await adapter.lookup({ email: 'lena.lead@globex.example' }, FIELDS);
    const [res] = await adapter.upsertActivities([
      {
        ...callWrite('call-lead'),
        links: { contactId: lena.contact!.id, contactType: 'lead', companyId: bob.company!.id },
      },
    ]);
    expect(res).toMatchObject({ ok: true, created: true });
    const [task] = await adminRecords(sb, 'Task');
    expect(task).toMatchObject({ WhoId: lena.contact!.id, WhatId: null });
  });

  it('cuts text to each field length from describe instead of failing', async () => {
    const long = 'Ünïcode 👍 '.repeat(5000);
    const [res] = await adapter.upsertActivities([
      callWrite('call-long', { Subject: long, Description: long }),
    ]);
    expect(res).toMatchObject({ ok: true });
    const [task] = await adminRecords(sb, 'Task');
    const subject = String(task!.Subject);
    expect(subject.length).toBeLessThanOrEqual(255);
    expect(subject.endsWith('…')).toBe(true);
    expect(String(task!.Description).length).toBeLessThanOrEqual(32000);
    expect(String(task!.Description).length).toBeGreaterThan(31000);
  });

  it('reports a record Salesforce refuses as CrmRejectedError and writes the others', async () => {
    const bad = {
      ...callWrite('call-bad'),
      links: { contactId: bob.company!.id, contactType: 'contact' as const },
    };
    const results = await adapter.upsertActivities([callWrite('call-good'), bad]);
    expect(results[0]).toMatchObject({ key: 'call-good', ok: true });
    expect(results[1]).toMatchObject({ key: 'call-bad', ok: false });
    const error = !results[1]!.ok ? results[1]!.error : undefined;
    expect(error).toBeInstanceOf(CrmRejectedError);
    expect((error as CrmRejectedError).fields).toEqual(['WhoId']);
    expect(await adminRecords(sb, 'Task')).toHaveLength(1);
  });

  it('reports an unknown field, which fails the whole request, on every record', async () => {
    const results = await adapter.upsertActivities([
      callWrite('a', { Shoe_Size__c: 44 }),
      callWrite('b', { Shoe_Size__c: 45 }),
    ]);
    for (const r of results) {
      expect(r.ok).toBe(false);
      const error = !r.ok ? r.error : undefined;
      expect(error).toBeInstanceOf(CrmRejectedError);
      expect((error as CrmRejectedError).fields).toEqual(['Shoe_Size__c']);
    }
  });

  it('writes a follow-up draft EmailMessage exactly once, and a follow-up Task', async () => {
    const links = { contactId: bob.contact!.id, contactType: 'contact' as const, dealId: bob.deals[0]!.id };
    const draft = {
      callId: 'call-1',
      draftId: 'draft-1',
      key: 'draft-1',
      kind: 'email' as const,
      properties: { Subject: 'Next steps', TextBody: 'Hi Bob, …', ToAddress: 'bob.smith@acme.example' },
      links,
    };
    const first = await adapter.upsertFollowups([draft]);
    const again = await adapter.upsertFollowups([
      { ...draft, properties: { ...draft.properties, Subject: 'Next steps (v2)' } },
    ]);
    expect(first[0]).toMatchObject({ key: 'draft-1', ok: true, created: true });
    expect(again[0]).toMatchObject({ ok: true, created: false });
    const emails = await adminRecords(sb, 'EmailMessage');
    expect(emails).toHaveLength(1);
    expect(emails[0]).toMatchObject({
      Status: '5',
      Subject: 'Next steps (v2)',
      RelatedToId: bob.deals[0]!.id,
    });

    const [task, note] = await adapter.upsertFollowups([
      {
        ...draft,
        draftId: 'draft-2',
        key: 'draft-2',
        kind: 'task',
        properties: { Subject: 'Send the proposal' },
      },
      { ...draft, draftId: 'draft-3', key: 'draft-3', kind: 'note' },
    ]);
    expect(task).toMatchObject({ ok: true, created: true });
    expect(note).toMatchObject({ key: 'draft-3', ok: false });
    const tasks = await adminRecords(sb, 'Task');
    expect(tasks).toEqual([
      expect.objectContaining({
        CrmSync_Followup_Id__c: 'draft-2',
        TaskSubtype: 'Task',
        Status: 'Not Started',
      }),
    ]);
  });

  it('stops on REQUEST_LIMIT_EXCEEDED and holds further requests without sending them', async () => {
    await adminPost(sb, 'faults', { kind: 'request_limit', method: 'PATCH' });
    const err = await adapter.upsertActivities([callWrite('call-1')]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmDailyLimitError);
    expect((err as CrmDailyLimitError).retryAfterMs).toBeGreaterThan(0);
    expect(adapter.usage().rateLimitedUntil).toBeGreaterThan(Date.now());
    const before = (await requestCounts(sb)).total;
    await expect(adapter.lookup({ email: 'bob.smith@acme.example' }, FIELDS)).rejects.toBeInstanceOf(
      CrmDailyLimitError,
    );
    expect((await requestCounts(sb)).total).toBe(before);
  });

  it('recovers from REQUEST_LIMIT_EXCEEDED once the hold has passed: the retried write lands once', async () => {
    const clock = new FakeClock(Date.now());
    const held = createSalesforceAdapter({ config: sandboxConfig(sb), clock });
    await adminPost(sb, 'faults', { kind: 'request_limit', method: 'PATCH' });
    const err = await held.upsertActivities([callWrite('call-9')]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmDailyLimitError);
    // The worker waits out retryAfterMs (the job is rescheduled), then tries again.
    await clock.advance((err as CrmDailyLimitError).retryAfterMs + 1);
    const [result] = await held.upsertActivities([callWrite('call-9')]);
    expect(result).toMatchObject({ ok: true, created: true });
    const tasks = (await adminRecords(sb, 'Task')).filter((t) => t.CrmSync_Call_Id__c === 'call-9');
    expect(tasks).toHaveLength(1);
  });

  it('keeps a reserve of the org allowance: stops once Sforce-Limit-Info shows it reached', async () => {
    sb.state.setApiUsage(14_240, 15_000); // 5% reserve = 750: after one more request, 759 remain
    await adapter.upsertActivities([callWrite('call-1')]); // describe + upsert: 14242 used, 758 left
    expect(adapter.usage()).toMatchObject({ remaining: 758, limit: 15_000 });
    expect(adapter.usage().rateLimitedUntil).toBeUndefined();
    sb.state.setApiUsage(14_250);
    await adapter.upsertActivities([callWrite('call-2')]); // 14251 used, 749 left: below the reserve
    const before = (await requestCounts(sb)).total;
    await expect(adapter.upsertActivities([callWrite('call-3')])).rejects.toBeInstanceOf(CrmDailyLimitError);
    expect((await requestCounts(sb)).total).toBe(before);
  });

  it('answers the org limit itself with CrmDailyLimitError', async () => {
    sb.state.setApiUsage(15_000, 15_000);
    await expect(adapter.lookup({ email: 'bob.smith@acme.example' }, FIELDS)).rejects.toBeInstanceOf(
      CrmDailyLimitError,
    );
  });

  it('turns a 503 on the collection upsert into CrmTransientError, sent once (PATCH is never retried)', async () => {
    await adminPost(sb, 'faults', { status: 503, method: 'PATCH' });
    await expect(adapter.upsertActivities([callWrite('call-1')])).rejects.toBeInstanceOf(CrmTransientError);
    expect((await requestCounts(sb)).counts[COLLECTION]).toBe(1);
    expect(await adapter.upsertActivities([callWrite('call-1')])).toMatchObject([
      { ok: true, created: true },
    ]);
  });
});
