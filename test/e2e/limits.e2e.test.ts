/**
 * A Service on a small plan that also answers 5xx to 30% of requests: the worker never goes past
 * the plan's limits, and every call still gets written back, once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import {
  completeCall,
  createCall,
  freePort,
  post,
  removeTempDirs,
  startWorkerProcess,
  stopWorker,
  tempDataDir,
  waitFor,
  waitWrittenBack,
  workerEnv,
  type WorkerProcess,
} from './harness.js';
import { draftIds, followupGenerations, hubspotActivityCounts, hubspotNotes } from './readback.js';

const LIMITS = { ratePerMinute: 120, burstPerSecond: 5, dailyCap: 10_000 };
const PEOPLE = [
  { name: 'Jane Doe', email: 'jane.doe@acme.example', company: 'Acme Corp' },
  { name: 'Dana Deals', email: 'dana@umbrella.example', company: 'Umbrella Inc' },
  { name: 'Bob Smith', email: 'bob.smith@acme.example', company: 'Acme Corp' },
];

let svc: ServiceSandbox;
let hs: HubSpotSandbox;
let worker: WorkerProcess;

beforeAll(async () => {
  const port = await freePort();
  [svc, hs] = await Promise.all([
    startServiceSandbox({
      limits: LIMITS,
      seedCalls: 0,
      analysisDelayMs: 50,
      webhookUrl: `http://127.0.0.1:${port}/webhooks`,
    }),
    startHubSpotSandbox(),
  ]);
  worker = await startWorkerProcess(
    workerEnv(
      svc,
      { kind: 'hubspot', sandbox: hs },
      {
        PORT: String(port),
        DATA_DIR: tempDataDir(),
        SERVICE_PLAN: 'enterprise',
        SERVICE_RATE_PER_MINUTE: String(LIMITS.ratePerMinute),
        SERVICE_BURST_PER_SECOND: String(LIMITS.burstPerSecond),
        SERVICE_DAILY_CAP: String(LIMITS.dailyCap),
      },
    ),
  );
});

afterAll(async () => {
  if (worker) await stopWorker(worker).catch(() => undefined);
  await Promise.all([svc?.close(), hs?.close()]);
  removeTempDirs();
});

describe('worker against a rate-limited, failing Service', () => {
  it('stays within 5/s and 120/min through a 30% 5xx storm, and writes every call back once', async ({
    annotate,
  }) => {
    await post(`${svc.url}/_admin/faults`, { errorRate: 0.3 });
    const calls: string[] = [];
    for (let i = 0; i < 8; i++) calls.push(await createCall(svc, PEOPLE[i % PEOPLE.length]!));
    await Promise.all(calls.map((id) => completeCall(svc, id)));

    await waitWrittenBack(worker, calls, 50_000);
    const counters = svc.state.countersSnapshot();
    const storm = ['500', '502', '503'].reduce((n, code) => n + (counters.byStatus[code] ?? 0), 0);
    expect(storm).toBeGreaterThan(0);
    expect(counters.maxInAnySecond).toBeLessThanOrEqual(LIMITS.burstPerSecond);
    expect(counters.maxInAnyMinute).toBeLessThanOrEqual(LIMITS.ratePerMinute);
    // 0 on an idle machine; on busy CI cores a request delayed past the budget's 100 ms margin can
    // still arrive inside the previous second (it is refused, not counted: the limits hold).
    expect(counters.rejected429).toBeLessThanOrEqual(2);

    // Once per call, whatever was retried. A follow-up POST answered 5xx is not sent again (the
    // Service may have made drafts; CONTRACT.md: at most once), so such a call has no drafts.
    expect(hubspotActivityCounts(hs, calls)).toEqual(Object.fromEntries(calls.map((id) => [id, 1])));
    expect(calls.filter((id) => followupGenerations(svc, id) > 1)).toEqual([]);
    for (const id of calls) {
      await waitFor(
        `notes of ${id}`,
        () => hubspotNotes(hs, draftIds(svc, id)).length === draftIds(svc, id).length,
      );
    }
    const withoutFollowups = calls.filter((id) => followupGenerations(svc, id) === 0).length;
    await annotate(
      `limits e2e: ${counters.accepted} accepted, ${counters.rejected429} 429s, max ${counters.maxInAnySecond}/s ` +
        `${counters.maxInAnyMinute}/min, statuses ${JSON.stringify(counters.byStatus)}, ` +
        `${withoutFollowups} of ${calls.length} calls without follow-ups`,
    );
  }, 60_000);
});
