/**
 * Deal-level signals with CRM=salesforce, the worker as a real process: three calls on one
 * Opportunity delivered out of order leave it showing the newest call's values, and a replayed
 * older call does not overwrite them (test/e2e/dealSignals.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import type { ServiceSandbox } from '@crm-sync/sandboxes/service';
import { outOfOrderCallsOnOneDeal, type DealView } from './dealSignals.js';
import { type WorkerProcess } from './harness.js';
import { salesforceTasks } from './readback.js';
import { startSalesforceStack, type E2eStack } from './stack.js';

const DANA = { name: 'Dana Deals', email: 'dana@umbrella.example', company: 'Umbrella Inc' };

let svc: ServiceSandbox;
let sf: SalesforceSandbox;
let stack: E2eStack<SalesforceSandbox>;
let worker: WorkerProcess;

beforeAll(async () => {
  stack = await startSalesforceStack();
  ({ svc, crm: sf, worker } = stack);
});

afterAll(() => stack?.close());

/** sObject Collections updates by id: `PATCH .../composite/sobjects` with no type in the path. */
function opportunityUpdates(): number {
  return Object.entries(sf.state.requestCounts())
    .filter(([key]) => /^PATCH \S*\/composite\/sobjects$/.test(key))
    .reduce((n, [, count]) => n + count, 0);
}

const orUndefined = (v: unknown) => (v === null || v === '' ? undefined : v);

describe('deal signals on Salesforce, end to end', () => {
  it('three calls on one Opportunity delivered out of order leave the newest call’s values; a replayed older call does not overwrite them', async () => {
    const outcome = await outOfOrderCallsOnOneDeal(
      svc,
      worker,
      DANA,
      {
        dealOf: (callId) => {
          const what = salesforceTasks(sf, callId)[0]?.WhatId;
          if (typeof what !== 'string') throw new Error(`call ${callId} has no Opportunity`);
          return what;
        },
        read: (dealId) => {
          const o: Record<string, unknown> = sf.state.store.get('Opportunity', dealId) ?? {};
          return {
            lastCallDate: o.CrmSync_Last_Call_Date__c,
            lastScore: o.CrmSync_Last_Call_Score__c,
            averageScore: o.CrmSync_Average_Score__c,
            openObjections: o.CrmSync_Open_Objections__c,
            lastNextStep: o.CrmSync_Last_Next_Step__c,
          };
        },
        dealUpdates: opportunityUpdates,
      },
      (v: DealView) => ({
        lastCallDate: orUndefined(v.lastCallDate),
        lastScore: orUndefined(v.lastScore),
        averageScore: orUndefined(v.averageScore),
        openObjections: orUndefined(v.openObjections),
        lastNextStep: orUndefined(v.lastNextStep),
      }),
    );
    // Two Opportunity updates (middle, then newest), and the newest call's score is what it shows.
    expect(outcome.dealUpdates).toBe(2);
    const opportunity: Record<string, unknown> = sf.state.store.get('Opportunity', outcome.dealId) ?? {};
    expect(opportunity.CrmSync_Last_Call_Score__c).toBe(
      svc.state.getCall(outcome.newest)?.analysis?.scoring.overall,
    );
  });
});
