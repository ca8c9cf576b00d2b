/**
 * The deal-signals scenario both CRM end-to-end tests run: three calls on one deal, delivered
 * out of order, then the oldest replayed. The deal must show the newest call's values after the
 * first newer call, be written once per newer call only, and never be overwritten by the older
 * call (late or replayed).
 */
import { expect } from 'vitest';
import type { ServiceSandbox } from '@crm-sync/sandboxes/service';
import {
  adminHeaders,
  completeCall,
  createCall,
  waitFor,
  waitWrittenBack,
  type Person,
  type WorkerProcess,
} from './harness.js';

/** What the test reads of the deal, in neutral names. */
export interface DealView {
  lastCallDate: unknown;
  lastScore: unknown;
  averageScore: unknown;
  openObjections: unknown;
  lastNextStep: unknown;
}

export interface DealDriver {
  /** The deal the call's activity was written on. */
  dealOf(callId: string): string;
  read(dealId: string): DealView;
  /** Deal update requests the CRM has seen so far. */
  dealUpdates(): number;
}

/** The values the shipped mapping derives from the Service's own analysis of `calls` (newest first). */
function expected(svc: ServiceSandbox, newestFirst: string[]) {
  const analyses = newestFirst.map((id) => {
    const call = svc.state.getCall(id);
    if (!call?.analysis) throw new Error(`call ${id} has no analysis`);
    return { createdAt: new Date(call.createdAtMs).toISOString(), analysis: call.analysis };
  });
  const scores = analyses.map((a) => a.analysis.scoring.overall).slice(0, 3);
  const detected = analyses.reduce((n, a) => n + a.analysis.objections.length, 0);
  const handled = analyses.reduce((n, a) => n + a.analysis.objections.filter((o) => o.handled).length, 0);
  const withSteps = analyses.find((a) => a.analysis.next_steps.length > 0);
  return {
    lastCallDate: analyses[0]!.createdAt.slice(0, 10),
    lastScore: analyses[0]!.analysis.scoring.overall,
    averageScore: Math.round((scores.reduce((a, b) => a + b, 0) / scores.length) * 10) / 10,
    openObjections: Math.max(0, detected - handled),
    lastNextStep: withSteps ? withSteps.analysis.next_steps.join('; ') : undefined,
  };
}

async function writtenBackCount(worker: WorkerProcess, callId: string): Promise<number> {
  const res = await fetch(`${worker.url}/admin/calls/${encodeURIComponent(callId)}`, {
    headers: adminHeaders(worker.env),
  });
  const body = (await res.json()) as { history: { toState: string }[] };
  return body.history.filter((e) => e.toState === 'written_back').length;
}

export async function outOfOrderCallsOnOneDeal(
  svc: ServiceSandbox,
  worker: WorkerProcess,
  person: Person,
  crm: DealDriver,
  normalise: (view: DealView) => DealView,
): Promise<{ dealId: string; newest: string; dealUpdates: number }> {
  // Created oldest first: the Service stamps strictly increasing start times.
  const oldest = await createCall(svc, person);
  const middle = await createCall(svc, person);
  const newest = await createCall(svc, person);
  const before = crm.dealUpdates();

  // Delivered middle, newest, oldest: each written back before the next completes.
  await completeCall(svc, middle);
  await waitWrittenBack(worker, [middle]);
  const dealId = crm.dealOf(middle);
  await waitFor('the deal to show the middle call', () => crm.dealUpdates() === before + 1);
  expect(normalise(crm.read(dealId))).toMatchObject({
    lastCallDate: expected(svc, [middle]).lastCallDate,
    lastScore: expected(svc, [middle]).lastScore,
  });

  await completeCall(svc, newest);
  await waitWrittenBack(worker, [newest]);
  expect(crm.dealOf(newest)).toBe(dealId);
  await waitFor('the deal to show the newest call', () => crm.dealUpdates() === before + 2);
  const shown = normalise(crm.read(dealId));
  expect(shown).toEqual(expected(svc, [newest, middle]));

  // The oldest call arrives last: recorded for later aggregates, but it writes nothing.
  await completeCall(svc, oldest);
  await waitWrittenBack(worker, [oldest]);
  expect(crm.dealOf(oldest)).toBe(dealId);
  expect(normalise(crm.read(dealId))).toEqual(shown);
  expect(crm.dealUpdates()).toBe(before + 2);

  // A replay of the oldest call rewrites its activity, and still not the deal.
  const writtenBefore = await writtenBackCount(worker, oldest);
  const replay = await fetch(`${worker.url}/admin/replay`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...adminHeaders(worker.env) },
    body: JSON.stringify({ callId: oldest }),
  });
  expect(replay.status).toBe(200);
  await waitFor('the replayed call to be written back again', async () => {
    return (await writtenBackCount(worker, oldest)) > writtenBefore;
  });
  expect(normalise(crm.read(dealId))).toEqual(shown);
  expect(crm.dealUpdates()).toBe(before + 2);
  return { dealId, newest, dealUpdates: crm.dealUpdates() - before };
}
