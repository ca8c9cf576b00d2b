/**
 * Deal-level signals with CRM=hubspot, the worker as a real process: three calls on one deal
 * delivered out of order leave the deal showing the newest call's values, and a replayed older
 * call does not overwrite them (test/e2e/dealSignals.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import type { ServiceSandbox } from '@crm-sync/sandboxes/service';
import { outOfOrderCallsOnOneDeal, type DealView } from './dealSignals.js';
import { completeCall, createCall, waitFor, waitWrittenBack, type WorkerProcess } from './harness.js';
import { hubspotCallEngagements, hubspotLinks } from './readback.js';
import { startHubSpotStack, type E2eStack } from './stack.js';

const DANA = { name: 'Dana Deals', email: 'dana@umbrella.example', company: 'Umbrella Inc' };

let svc: ServiceSandbox;
let hs: HubSpotSandbox;
let stack: E2eStack<HubSpotSandbox>;
let worker: WorkerProcess;

beforeAll(async () => {
  stack = await startHubSpotStack();
  ({ svc, crm: hs, worker } = stack);
});

afterAll(() => stack?.close());

/** HubSpot sends every property value as text; an empty one is unset. */
const num = (v: unknown) => (v === undefined || v === null || v === '' ? undefined : Number(v));
const text = (v: unknown) => (v === undefined || v === null || v === '' ? undefined : String(v));

const dealUpdates = () => hs.state.requests.count('POST', '/crm/objects/2026-09/deals/batch/update');

describe('deal signals on HubSpot, end to end', () => {
  it('three calls on one deal delivered out of order leave the newest call’s values; a replayed older call does not overwrite them', async () => {
    await outOfOrderCallsOnOneDeal(
      svc,
      worker,
      DANA,
      {
        dealOf: (callId) => {
          const [engagement] = hubspotCallEngagements(hs, callId);
          const dealId = engagement && hubspotLinks(hs, 'calls', engagement.id).deals[0];
          if (!dealId) throw new Error(`call ${callId} has no deal`);
          return dealId;
        },
        read: (dealId) => {
          const p = hs.state.store.objects.deals.get(dealId)?.properties ?? {};
          return {
            lastCallDate: p.crmsync_last_call_date,
            lastScore: p.crmsync_last_call_score,
            averageScore: p.crmsync_average_score,
            openObjections: p.crmsync_open_objections,
            lastNextStep: p.crmsync_last_next_step,
          };
        },
        dealUpdates,
      },
      (v: DealView) => ({
        lastCallDate: text(v.lastCallDate),
        lastScore: num(v.lastScore),
        averageScore: num(v.averageScore),
        openObjections: num(v.openObjections),
        lastNextStep: text(v.lastNextStep),
      }),
    );
  });

  it('after a restart on the same database the deal is neither rewritten nor skipped', async () => {
    const before = dealUpdates();
    await stack.restartWorker();
    worker = stack.worker;
    // No deal is due after the restart (the start-up poll and housekeeping send nothing); the next
    // newer call is written exactly once.
    const next = await createCall(svc, DANA);
    await completeCall(svc, next);
    await waitWrittenBack(worker, [next]);
    await waitFor('the deal to show the newer call', () => dealUpdates() >= before + 1);
    expect(dealUpdates()).toBe(before + 1);
    const [engagement] = hubspotCallEngagements(hs, next);
    const dealId = hubspotLinks(hs, 'calls', engagement!.id).deals[0]!;
    expect(hs.state.store.objects.deals.get(dealId)?.properties.crmsync_last_call_score).toBe(
      String(svc.state.getCall(next)!.analysis!.scoring.overall),
    );
  });
});
