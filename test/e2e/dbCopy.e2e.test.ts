/**
 * Outgrowing the embedded database: a worker syncs calls on the embedded default, is stopped,
 * `crm-sync db copy --to` moves its state into an empty PostgreSQL, and a worker started there
 * polls and replays without re-generating a follow-up draft or writing a second activity.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import { createEmptyDatabase, TEST_DATABASE_URL, type TestDatabase } from '../store/helpers.js';
import {
  completeCall,
  createCall,
  freePort,
  removeTempDirs,
  runCli,
  startWorkerProcess,
  stopWorker,
  tempDataDir,
  waitFor,
  waitWrittenBack,
  workerEnv,
  type WorkerEnv,
  type WorkerProcess,
} from './harness.js';
import { draftIds, followupGenerations, hubspotActivityCounts, hubspotNotes } from './readback.js';

const PEOPLE = [
  { name: 'Jane Doe', email: 'jane.doe@acme.example', company: 'Acme Corp' },
  { name: 'Dana Deals', email: 'dana@umbrella.example', company: 'Umbrella Inc' },
  { name: 'Bob Smith', email: 'bob.smith@acme.example', company: 'Acme Corp' },
];
const EVERY_SECOND = '* * * * * *';

describe.skipIf(!TEST_DATABASE_URL)('moving from the embedded database to PostgreSQL', () => {
  let svc: ServiceSandbox;
  let hs: HubSpotSandbox;
  let env: WorkerEnv;
  let target: TestDatabase;
  let worker: WorkerProcess | undefined;

  beforeAll(async () => {
    const port = await freePort();
    [svc, hs, target] = await Promise.all([
      startServiceSandbox({
        plan: 'enterprise',
        seedCalls: 0,
        analysisDelayMs: 50,
        webhookUrl: `http://127.0.0.1:${port}/webhooks`,
      }),
      startHubSpotSandbox(),
      createEmptyDatabase('postgres'),
    ]);
    env = workerEnv(
      svc,
      { kind: 'hubspot', sandbox: hs },
      { PORT: String(port), DATA_DIR: tempDataDir(), POLL_SCHEDULE: EVERY_SECOND },
    );
  }, 60_000);

  afterAll(async () => {
    if (worker) await stopWorker(worker).catch(() => undefined);
    await Promise.all([svc?.close(), hs?.close()]);
    await target?.drop(false);
    removeTempDirs();
  });

  it('db copy moves the state; the worker on PostgreSQL generates no draft and writes no activity twice', async () => {
    worker = await startWorkerProcess(env);
    const calls: string[] = [];
    for (const person of PEOPLE) calls.push(await createCall(svc, person));
    await Promise.all(calls.map((id) => completeCall(svc, id)));
    await waitWrittenBack(worker, calls, 30_000);
    for (const id of calls) {
      await waitFor(
        `notes of ${id}`,
        () => hubspotNotes(hs, draftIds(svc, id)).length === draftIds(svc, id).length,
      );
    }
    await waitFor(
      'the poller to pass the calls',
      async () => (await worker!.status()).cursor.lastCallCreatedAt !== null,
    );
    const generations = Object.fromEntries(calls.map((id) => [id, followupGenerations(svc, id)]));
    const notes = hubspotNotes(hs).length;
    expect(Object.values(generations).every((n) => n === 1)).toBe(true);
    await stopWorker(worker);
    worker = undefined;

    const url = new URL(target.url!);
    url.password = 'not-shown-anywhere'; // trust auth: ignored by the server, must not be printed
    const copy = await runCli(['db', 'copy', '--to', url.toString()], env);
    expect(copy.stderr).toBe('');
    expect(copy.code).toBe(0);
    expect(copy.stdout).toMatch(/sync_status\s+3 row\(s\)/);
    expect(copy.stdout).toMatch(/call_followup\s+\d+ row\(s\)/);
    expect(copy.stdout).toContain(':***@');
    expect(copy.stdout).not.toContain('not-shown-anywhere');

    const onPostgres: WorkerEnv = { ...env, DATABASE_URL: target.url };
    const copiedAt = Date.now();
    worker = await startWorkerProcess(onPostgres);
    const before = await worker.status();
    expect(before.calls).toMatchObject({ written_back: 3 });
    // The poller walks from the copied cursor: a poll on PostgreSQL has finished.
    await waitFor(
      'a poll on PostgreSQL',
      async () => Date.parse((await worker!.status()).cursor.updatedAt ?? '0') > copiedAt,
    );
    // A replay re-runs the write-back: an upsert on the copied activity, drafts already received.
    const historyLength = async () =>
      ((await worker!.get<{ history: unknown[] }>(`/admin/calls/${calls[0]}`)).history ?? []).length;
    const eventsBefore = await historyLength();
    const replay = await runCli(['replay', '--call', calls[0]!], onPostgres);
    expect(replay.code).toBe(0);
    await waitFor('the replay to finish', async () => (await historyLength()) > eventsBefore + 1);
    await waitWrittenBack(worker, calls, 30_000);

    expect(Object.fromEntries(calls.map((id) => [id, followupGenerations(svc, id)]))).toEqual(generations);
    expect(hubspotActivityCounts(hs, calls)).toEqual(Object.fromEntries(calls.map((id) => [id, 1])));
    expect(hubspotNotes(hs)).toHaveLength(notes);
  }, 180_000);
});
