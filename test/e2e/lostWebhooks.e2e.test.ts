/**
 * Webhooks that never arrive (the Service's webhook URL points at a dead port): the cursor poller
 * finds the calls on its schedule, pushes a live call's context and writes analysed calls back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import {
  createCall,
  freePort,
  removeTempDirs,
  startWorkerProcess,
  stopWorker,
  syncState,
  tempDataDir,
  waitFor,
  waitWrittenBack,
  workerEnv,
  type WorkerProcess,
} from './harness.js';
import {
  draftIds,
  followupGenerations,
  hubspotActivityCounts,
  hubspotNotes,
  pushedContexts,
} from './readback.js';

let svc: ServiceSandbox;
let hs: HubSpotSandbox;
let worker: WorkerProcess;

beforeAll(async () => {
  const [port, deadPort] = await Promise.all([freePort(), freePort()]);
  [svc, hs] = await Promise.all([
    startServiceSandbox({
      plan: 'enterprise',
      seedCalls: 0,
      // Analysed as soon as completed, so a poll sees a call either live or analysed.
      analysisDelayMs: 0,
      webhookUrl: `http://127.0.0.1:${deadPort}/webhooks`,
      webhookRetry: { delaysMs: [100] },
    }),
    startHubSpotSandbox(),
  ]);
  worker = await startWorkerProcess(
    workerEnv(
      svc,
      { kind: 'hubspot', sandbox: hs },
      { PORT: String(port), DATA_DIR: tempDataDir(), POLL_SCHEDULE: '*/2 * * * * *' },
    ),
  );
});

afterAll(async () => {
  if (worker) await stopWorker(worker).catch(() => undefined);
  await Promise.all([svc?.close(), hs?.close()]);
  removeTempDirs();
});

describe('lost webhooks', () => {
  it('finds live and finished calls by polling: context pushed, activity and notes written once', async () => {
    // The finished calls are created ended and analysed in one step (analysisDelayMs 0), so no
    // poll can see them in progress, whenever it runs.
    const finished = [
      await createCall(
        svc,
        { name: 'Dana Deals', email: 'dana@umbrella.example', company: 'Umbrella Inc' },
        { complete: true },
      ),
      await createCall(
        svc,
        { name: 'Bob Smith', email: 'bob.smith@acme.example', company: 'Acme Corp' },
        { complete: true },
      ),
    ];
    const live = await createCall(svc, {
      name: 'Jane Doe',
      email: 'jane.doe@acme.example',
      company: 'Acme Corp',
    });

    await waitWrittenBack(worker, finished, 15_000);
    const context = await waitFor('the live call context', () => pushedContexts(svc, live)[0], {
      timeoutMs: 10_000,
    });
    expect(context).toMatchObject({
      contact: { email: 'jane.doe@acme.example' },
      company: { name: 'Acme Corp' },
    });
    expect(await syncState(worker, live)).toBe('context_pushed');

    expect(hubspotActivityCounts(hs, finished)).toEqual(Object.fromEntries(finished.map((id) => [id, 1])));
    for (const id of finished) {
      expect(followupGenerations(svc, id)).toBe(1);
      expect(hubspotNotes(hs, draftIds(svc, id))).toHaveLength(draftIds(svc, id).length);
    }
    // Not one webhook reached the worker: the poller did all of it.
    const hooks = svc.state.countersSnapshot().webhooks;
    expect(hooks.delivered).toBe(0);
    expect(hooks.failedAttempts).toBeGreaterThan(0);
  }, 40_000);
});
