/**
 * The worker as a real process with CRM=salesforce: live context from the org, then one call Task
 * with its scores and one draft EmailMessage per follow-up, on the right Who and What.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import type { ServiceSandbox } from '@crm-sync/sandboxes/service';
import { completeCall, createCall, waitFor, waitWrittenBack, type WorkerProcess } from './harness.js';
import { expectEmptyFieldRecordsSynced } from './emptyFields.js';
import {
  draftIds,
  expectedScores,
  followupGenerations,
  pushedContexts,
  salesforceEmails,
  salesforceId,
  salesforceTasks,
  emailDraftId,
} from './readback.js';
import { startSalesforceStack, type E2eStack } from './stack.js';

const DANA = { name: 'Dana Deals', email: 'dana@umbrella.example', company: 'Umbrella Inc' };
// A Lead, not a Contact: the Task goes on the Lead and has no WhatId.
const LENA = { name: 'Lena Lead', email: 'lena.lead@globex.example', company: 'Globex' };

let svc: ServiceSandbox;
let sf: SalesforceSandbox;
let stack: E2eStack<SalesforceSandbox>;
let worker: WorkerProcess;

beforeAll(async () => {
  stack = await startSalesforceStack();
  ({ svc, crm: sf, worker } = stack);
});

afterAll(() => stack?.close());

describe('worker + Salesforce, end to end', () => {
  it('pushes live context, then writes one call Task with scores and draft EmailMessages on the right records', async () => {
    const danaId = salesforceId(sf, 'Contact', (c) => c.Email === 'dana@umbrella.example');
    const labSupplies = salesforceId(sf, 'Opportunity', (o) => o.Name === 'Umbrella - Lab Supplies');
    const lenaId = salesforceId(sf, 'Lead', (l) => l.Email === 'lena.lead@globex.example');

    const dana = await createCall(svc, DANA);
    const lena = await createCall(svc, LENA);
    const [danaContext, lenaContext] = await waitFor('both contexts to be pushed', () => {
      const d = pushedContexts(svc, dana)[0];
      const l = pushedContexts(svc, lena)[0];
      return d && l ? [d, l] : undefined;
    });
    expect(danaContext).toMatchObject({
      source: 'salesforce',
      contact: { name: 'Dana Scully', email: 'dana@umbrella.example' },
      company: { name: 'Umbrella Inc', domain: 'umbrella.example' },
      custom: { matched_by: 'email' },
    });
    // Both open opportunities, soonest close date first.
    expect(danaContext!.deals?.map((d) => d.name)).toEqual([
      'Umbrella - Lab Supplies',
      'Umbrella - Outbreak Response',
    ]);
    expect(danaContext!.deals?.[0]?.id).toBe(labSupplies);
    expect(lenaContext).toMatchObject({
      contact: { name: 'Lena Lead', email: 'lena.lead@globex.example' },
      company: { name: 'Globex' },
      custom: { matched_by: 'lead_email', lead_status: 'Working - Contacted' },
    });

    await Promise.all([completeCall(svc, dana), completeCall(svc, lena)]);
    await waitWrittenBack(worker, [dana, lena]);

    const tasks = { dana: salesforceTasks(sf, dana), lena: salesforceTasks(sf, lena) };
    expect(tasks.dana).toHaveLength(1);
    expect(tasks.lena).toHaveLength(1);
    const { scoring, detected, handled } = expectedScores(svc, dana);
    expect(tasks.dana[0]).toMatchObject({
      WhoId: danaId,
      WhatId: labSupplies,
      Status: 'Completed',
      TaskSubtype: 'Call',
      CrmSync_Score_Overall__c: scoring.overall,
      CrmSync_Score_Rapport__c: scoring.rapport,
      CrmSync_Score_Discovery__c: scoring.discovery,
      CrmSync_Score_Objection_Handling__c: scoring.objection_handling,
      CrmSync_Score_Closing__c: scoring.closing,
      CrmSync_Objections_Detected__c: detected,
      CrmSync_Objections_Handled__c: handled,
    });
    expect(tasks.lena[0]).toMatchObject({
      WhoId: lenaId,
      CrmSync_Score_Overall__c: expectedScores(svc, lena).scoring.overall,
    });
    expect(tasks.lena[0]?.WhatId ?? null).toBeNull();

    // One generation per call; each draft one draft EmailMessage (Status 5), Dana's on her deal.
    for (const callId of [dana, lena]) expect(followupGenerations(svc, callId)).toBe(1);
    const danaDrafts = svc.state.followups(dana);
    const emails = salesforceEmails(
      sf,
      danaDrafts.map((d) => d.id),
    );
    expect(emails).toHaveLength(danaDrafts.length);
    for (const email of emails) {
      const draft = danaDrafts.find((d) => d.id === emailDraftId(email))!;
      expect(email).toMatchObject({
        Status: '5',
        RelatedToId: labSupplies,
        Subject: draft.subject,
        ToAddress: 'dana@umbrella.example',
      });
    }
    expect(salesforceEmails(sf, draftIds(svc, lena))).toHaveLength(draftIds(svc, lena).length);

    const status = await worker.status();
    expect(status).toMatchObject({ crm: 'salesforce', calls: { written_back: 2 } });
  });

  it('pushes context for records with empty fields (no first name, no website, no company) and writes them back', async () => {
    await expectEmptyFieldRecordsSynced(svc, worker);
  });
});
