/**
 * Every Service call status through the real worker (pipelines, runner, poller) against the
 * Service and HubSpot sandboxes on a fake clock: where each call ends, and that `crm-sync status`
 * shows a call that failed at the Service as skipped, with the reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import { FakeClock } from '../../src/util/fakeClock.js';
import { runCli } from '../e2e/harness.js';
import {
  adminPost,
  ROOMY_LIMITS,
  startInProcessWorker,
  tickUntil,
  type InProcessWorker,
} from './inProcess.js';

const JANE = { name: 'Jane Doe', email: 'jane.doe@acme.example', company: 'Acme Corp' };
const STATUSES = [
  'scheduled',
  'in_progress',
  'completed',
  'processing',
  'analyzed',
  'failed',
  'cancelled',
  'on_hold',
];
const HOUR = 3_600_000;

let clock: FakeClock;
let svc: ServiceSandbox;
let hs: HubSpotSandbox;
let worker: InProcessWorker;

beforeAll(async () => {
  clock = new FakeClock();
  [svc, hs] = await Promise.all([
    startServiceSandbox({ clock, seedCalls: 0, limits: ROOMY_LIMITS, analysisDelayMs: 1_000 }),
    startHubSpotSandbox({ clock, limits: { perWindow: 10_000 } }),
  ]);
  // The calls exist before the worker starts (no webhooks): its first poll finds them.
  for (const status of STATUSES) {
    await adminPost(`${svc.url}/_admin/calls`, { id: `call_${status}`, participant: JANE });
    if (status !== 'in_progress')
      await adminPost(`${svc.url}/_admin/calls/call_${status}/status`, { status });
  }
  worker = await startInProcessWorker(clock, svc, hs);
});

afterAll(async () => {
  await worker?.close();
  await Promise.all([svc?.close(), hs?.close()]);
});

async function states(): Promise<Record<string, string | undefined>> {
  const out: Record<string, string | undefined> = {};
  for (const status of STATUSES) out[status] = (await worker.call(`call_${status}`))?.state;
  return out;
}

async function waitStates(expected: Record<string, string>): Promise<void> {
  await tickUntil(
    clock,
    `calls to reach ${JSON.stringify(expected)}`,
    async () => matches(await states(), expected),
    {
      describe: states,
    },
  );
}

function matches(actual: Record<string, string | undefined>, expected: Record<string, string>): boolean {
  return Object.entries(expected).every(([k, v]) => actual[k] === v);
}

describe('each Service call status through the worker', { timeout: 180_000 }, () => {
  it('ends where the README says', async () => {
    // First poll: analysed calls are written, failed and cancelled ones skipped, live ones get
    // their context; the rest wait for the five-minute look.
    await waitStates({
      scheduled: 'context_pushed',
      in_progress: 'context_pushed',
      completed: 'discovered',
      processing: 'discovered',
      analyzed: 'written_back',
      failed: 'skipped',
      cancelled: 'skipped',
      on_hold: 'discovered',
    });
    expect((await worker.call('call_failed'))?.state).toBe('skipped');

    // The calls end on the Service; the worker looks again after five minutes.
    for (const id of ['call_in_progress', 'call_completed', 'call_processing'])
      await adminPost(`${svc.url}/_admin/calls/${id}/complete`);
    await clock.advance(5 * 60_000);
    await waitStates({
      scheduled: 'awaiting_analysis',
      in_progress: 'written_back',
      completed: 'written_back',
      processing: 'written_back',
      on_hold: 'awaiting_analysis',
    });

    // A call still scheduled, or in a status crm-sync does not know, is given up after 48 hours.
    await clock.advance(49 * HOUR);
    await waitStates({ scheduled: 'failed', on_hold: 'failed' });
    expect(await worker.call('call_on_hold')).toMatchObject({
      lastErrorCode: 'SERVICE_NOT_READY',
      lastErrorMessage: expect.stringContaining('call is on_hold'),
    });
    expect(await states()).toEqual({
      scheduled: 'failed',
      in_progress: 'written_back',
      completed: 'written_back',
      processing: 'written_back',
      analyzed: 'written_back',
      failed: 'skipped',
      cancelled: 'skipped',
      on_hold: 'failed',
    });
  });

  it('crm-sync status shows the call that failed at the Service as skipped, with the reason', async () => {
    const { code, stdout } = await runCli(['status'], worker.env);
    expect(code).toBe(0);
    expect(stdout).toMatch(/skipped\s*\|?\s*2/);
    expect(stdout).toContain('Recently skipped');
    expect(stdout).toMatch(/call_failed.*the call failed at the Service/);
    expect(stdout).toMatch(/call_cancelled.*the call was cancelled at the Service/);
  });
});
