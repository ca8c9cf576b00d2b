import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSalesforceAdapter, type SalesforceAdapter } from '../../src/crm/salesforce/index.js';
import type { ActivityWrite, FollowupWrite } from '../../src/crm/types.js';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { requestCounts, sandboxConfig } from './helpers.js';

const QUERY = {
  activityIdField: 'CrmSync_Call_Id__c',
  followups: { kind: 'email' as const, idField: 'CrmSync_Followup_Id__c', callIdField: 'CrmSync_Call_Id__c' },
};

function activity(callId: string): ActivityWrite {
  return {
    callId,
    idField: 'CrmSync_Call_Id__c',
    properties: { CrmSync_Call_Id__c: callId, Subject: `Call ${callId}`, ActivityDate: '2026-01-15' },
    links: {},
  };
}

function draft(callId: string, n: number): FollowupWrite {
  const draftId = `${callId}-draft-${n}`;
  return {
    callId,
    draftId,
    key: draftId,
    kind: 'email',
    idField: 'CrmSync_Followup_Id__c',
    properties: {
      CrmSync_Followup_Id__c: draftId,
      CrmSync_Call_Id__c: callId,
      Subject: 'Follow-up',
      TextBody: 'Thanks',
      Status: '5',
    },
    links: {},
  };
}

describe('Salesforce findWritten (jsforce against the sandbox)', () => {
  let sb: SalesforceSandbox;
  let adapter: SalesforceAdapter;
  const ids = Array.from({ length: 250 }, (_, i) => `call-${i}`);
  const taskIds = new Map<string, string>();
  const emailIds = new Map<string, string>();

  beforeAll(async () => {
    sb = await startSalesforceSandbox();
    adapter = createSalesforceAdapter({ config: sandboxConfig(sb) });
    for (const r of await adapter.upsertActivities(ids.map(activity))) if (r.ok) taskIds.set(r.key, r.id);
    // The first 100 calls have two draft EmailMessages each; the rest have their Task only.
    const drafts = ids.slice(0, 100).flatMap((id) => [draft(id, 1), draft(id, 2)]);
    for (const r of await adapter.upsertFollowups(drafts)) if (r.ok) emailIds.set(r.key, r.id);
    expect(taskIds.size).toBe(250);
    expect(emailIds.size).toBe(200);
  });
  afterAll(() => sb.close());

  it('finds each call Task and the draft EmailMessages carrying its call id, in one query per 200 ids of each', async () => {
    const before = await requestCounts(sb);
    const unknown = ['call-never-1', 'call-never-2', 'call-never-3', 'call-never-4', 'call-never-5'];
    const found = await adapter.findWritten([...ids, ...unknown], QUERY);
    const after = await requestCounts(sb);

    expect(found.size).toBe(250);
    for (const id of unknown) expect(found.has(id)).toBe(false);
    expect(found.get('call-7')).toEqual({
      activityId: taskIds.get('call-7'),
      followups: expect.arrayContaining([
        { draftId: 'call-7-draft-1', crmId: emailIds.get('call-7-draft-1') },
        { draftId: 'call-7-draft-2', crmId: emailIds.get('call-7-draft-2') },
      ]),
    });
    expect(found.get('call-7')!.followups).toHaveLength(2);
    expect(found.get('call-200')).toEqual({ activityId: taskIds.get('call-200'), followups: [] });
    // 255 ids: two Task queries; 250 calls found: two EmailMessage queries. Nothing else.
    expect(after.total - before.total).toBe(4);
  });

  it('matches call ids whatever their case, as SOQL compares text', async () => {
    const found = await adapter.findWritten(['CALL-3'], QUERY);
    expect(found.get('CALL-3')?.activityId).toBe(taskIds.get('call-3'));
    expect(found.get('CALL-3')?.followups).toHaveLength(2);
  });
});
