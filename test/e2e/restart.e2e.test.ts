/**
 * The worker process dying and stopping: SIGKILL mid-run loses and duplicates nothing after a
 * restart on the same data directory; forged webhooks leave no trace; SIGTERM drains and exits 0,
 * and the next worker carries on.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import { openDatabase } from '../../src/store/database.js';
import {
  completeCall,
  createCall,
  freePort,
  removeTempDirs,
  runCli,
  startWorkerProcess,
  stopWorker,
  syncState,
  tempDataDir,
  waitFor,
  waitWrittenBack,
  workerEnv,
  type WorkerEnv,
  type WorkerProcess,
} from './harness.js';
import {
  draftIds,
  followupGenerations,
  hubspotActivityCounts,
  hubspotCallEngagements,
  hubspotNotes,
  noteDraftId,
} from './readback.js';

const PEOPLE = [
  { name: 'Jane Doe', email: 'jane.doe@acme.example', company: 'Acme Corp' },
  { name: 'Dana Deals', email: 'dana@umbrella.example', company: 'Umbrella Inc' },
  { name: 'Bob Smith', email: 'bob.smith@acme.example', company: 'Acme Corp' },
  { name: 'New Person', email: 'newperson@initech.example', company: 'Initech' },
];

let svc: ServiceSandbox;
let hs: HubSpotSandbox;
let env: WorkerEnv;
let worker: WorkerProcess | undefined;
const allCalls: string[] = [];
const forgedCall = `call_forged_${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  const port = await freePort();
  [svc, hs] = await Promise.all([
    startServiceSandbox({
      plan: 'enterprise',
      seedCalls: 0,
      analysisDelayMs: 50,
      webhookUrl: `http://127.0.0.1:${port}/webhooks`,
      // The real Service retries for 24 hours; long enough here to span a restart.
      webhookRetry: { delaysMs: [200, 1_000, 3_000, 6_000, 10_000, 15_000] },
    }),
    startHubSpotSandbox(),
  ]);
  env = workerEnv(svc, { kind: 'hubspot', sandbox: hs }, { PORT: String(port), DATA_DIR: tempDataDir() });
});

afterAll(async () => {
  if (worker) await stopWorker(worker).catch(() => undefined);
  await Promise.all([svc?.close(), hs?.close()]);
  removeTempDirs();
});

/** Creates `n` live calls (their contexts get pushed) and completes them all at once. */
async function runCalls(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push(await createCall(svc, PEOPLE[i % PEOPLE.length]!));
  await Promise.all(ids.map((id) => completeCall(svc, id)));
  allCalls.push(...ids);
  return ids;
}

/**
 * Every call so far: one engagement, at most one follow-up generation (CONTRACT.md: the POST makes
 * new drafts each time), and each generated draft exactly one note. Returns the calls that got no
 * generation at all.
 */
async function expectEachCallOnce(): Promise<string[]> {
  for (const id of allCalls) {
    await waitFor(
      `notes of ${id}`,
      () => hubspotNotes(hs, draftIds(svc, id)).length === draftIds(svc, id).length,
      {
        describe: async () => ({
          drafts: draftIds(svc, id),
          notes: hubspotNotes(hs, draftIds(svc, id)).map(noteDraftId),
          sync: await worker?.get(`/admin/calls/${id}`).catch((err: unknown) => String(err)),
        }),
      },
    );
  }
  expect(hubspotActivityCounts(hs, allCalls)).toEqual(Object.fromEntries(allCalls.map((id) => [id, 1])));
  expect(allCalls.filter((id) => followupGenerations(svc, id) > 1)).toEqual([]);
  expect(hubspotCallEngagements(hs)).toHaveLength(allCalls.length);
  expect(hubspotNotes(hs)).toHaveLength(allCalls.flatMap((id) => draftIds(svc, id)).length);
  return allCalls.filter((id) => followupGenerations(svc, id) === 0);
}

describe('worker crashes, restarts and shutdowns', () => {
  it('SIGKILL mid-run, restarted on the same data directory: nothing lost, nothing twice', async ({
    annotate,
  }) => {
    worker = await startWorkerProcess(env);
    const calls = await runCalls(12);
    // Kill once the Service has generated follow-ups for some calls and HubSpot lacks some engagements.
    await waitFor(
      'the write-back to be under way',
      () =>
        calls.some((id) => followupGenerations(svc, id) > 0) &&
        hubspotCallEngagements(hs).length < calls.length,
      { intervalMs: 5 },
    );
    worker.kill('SIGKILL');
    expect(await worker.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const doneAtKill = hubspotCallEngagements(hs).length;

    worker = await startWorkerProcess(env);
    await waitWrittenBack(worker, calls, 30_000);
    const withoutFollowups = await expectEachCallOnce();
    expect(doneAtKill).toBeLessThan(calls.length);
    // A kill between claiming a call's follow-up generation and sending the POST loses that one
    // generation (at most once, never twice); report how often this run hit that window.
    await annotate(
      `SIGKILL e2e: ${withoutFollowups.length} of ${calls.length} calls lost their follow-up generation to the kill`,
    );
  }, 60_000);

  it('answers 401 to forged webhooks and keeps no trace of them', async () => {
    worker ??= await startWorkerProcess(env);
    const before = await worker.status();
    const body = JSON.stringify({
      id: `evt_forged_${randomUUID().slice(0, 8)}`,
      type: 'call.started',
      created_at: new Date().toISOString(),
      data: { call_id: forgedCall, call: { id: forgedCall, status: 'in_progress' } },
    });
    const wrongSecret = createHmac('sha256', 'not-the-webhook-secret').update(body).digest('hex');
    // The right secret over other bytes: a signature replayed on an altered body.
    const otherBody = createHmac('sha256', svc.webhookSecret).update(`${body} `).digest('hex');
    for (const signature of [wrongSecret, `sha256=${otherBody}`, undefined]) {
      const res = await fetch(`${worker.url}/webhooks`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(signature ? { 'x-service-signature': signature } : {}),
        },
        body,
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: { code: 'WEBHOOK_BAD_SIGNATURE' } });
    }
    const after = await worker.status();
    expect(after.calls).toEqual(before.calls);
    expect(after.jobs.byState).toEqual(before.jobs.byState);
    expect(await syncState(worker, forgedCall)).toBeUndefined();
    // The database, read once the worker is stopped, is checked in the next test.
  });

  it('SIGTERM mid-run: exits 0 within the drain time, leaves a readable database, and the next worker finishes the work', async ({
    annotate,
  }) => {
    worker ??= await startWorkerProcess(env);
    const calls = await runCalls(6);
    await waitFor(
      'the write-back to be under way',
      () => calls.some((id) => followupGenerations(svc, id) > 0),
      {
        intervalMs: 5,
      },
    );
    const stoppedAt = Date.now();
    const exit = await stopWorker(worker, 25_000);
    const tookMs = Date.now() - stoppedAt;
    worker = undefined;
    expect(exit).toEqual({ code: 0, signal: null });
    // `crm-sync start` drains for 20 s by default.
    expect(tookMs).toBeLessThan(20_000);
    await annotate(`SIGTERM e2e: the worker exited 0 after ${tookMs} ms`);

    // Stopped, the embedded database is free for the CLI and for a look inside: the forged
    // webhooks of the previous test left nothing, while genuine deliveries are all there.
    const cli = await runCli(['status', '--call', forgedCall, '--json'], env);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain(`no sync row for call ${forgedCall}`);
    const db = await openDatabase({ dataDir: env.DATA_DIR });
    try {
      expect(await db.prisma.syncStatus.count({ where: { callId: forgedCall } })).toBe(0);
      expect(await db.prisma.webhookInbox.count({ where: { rawBody: { contains: forgedCall } } })).toBe(0);
      expect(await db.prisma.job.count({ where: { key: { contains: forgedCall } } })).toBe(0);
      expect(await db.prisma.webhookInbox.count({ where: { callId: allCalls[0] } })).toBeGreaterThan(0);
    } finally {
      await db.close();
    }

    worker = await startWorkerProcess(env);
    await waitWrittenBack(worker, calls, 30_000);
    // A graceful stop lets running jobs finish or hands them back: these calls all got follow-ups.
    const withoutFollowups = await expectEachCallOnce();
    expect(withoutFollowups.filter((id) => calls.includes(id))).toEqual([]);
    const status = await worker.status();
    expect(status.calls.written_back).toBe(allCalls.length);
    expect(status.jobs.byState.failed).toBe(0);
  }, 60_000);
});
