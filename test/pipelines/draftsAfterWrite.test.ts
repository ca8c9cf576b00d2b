/**
 * Drafts that arrive for a call another run has already written (issue 22, chaos rolling-deploy
 * seed 20261129: a call adopted by a later replica was left without the drafts the Service made for
 * it). The call's drafts job is queued with them, at write-back priority, so one run of it writes
 * them to the CRM now, not the housekeeping sweep minutes later; and only them (one note each, the
 * activity not written again, the Service not asked). Real parts: the database (both kinds), the
 * Service sandbox through the client and budget, the HubSpot sandbox through its adapter, the inbox.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHubSpotAdapter } from '../../src/crm/hubspot/index.js';
import type { CrmAdapter } from '../../src/crm/types.js';
import { FOLLOWUPS_GENERATED_AT_FIELD, loadMappings } from '../../src/mapping/index.js';
import type { Mapping } from '../../src/mapping/types.js';
import { createJobRun } from '../../src/pipelines/jobRun.js';
import { JOB_PRIORITY, writebackJobKey, type WritebackJobPayload } from '../../src/store/jobKinds.js';
import type { WritebackItem } from '../../src/pipelines/types.js';
import { runWritebackBatch } from '../../src/pipelines/writeback.js';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { DRAFTS_JOB_REASON } from '../../src/store/draftsJob.js';
import { LeaseLostError } from '../../src/store/fence.js';
import { saveFollowupAnswer } from '../../src/store/followupClaims.js';
import { listFollowupDrafts, saveFollowupDrafts } from '../../src/store/followupRepo.js';
import { enqueueJob } from '../../src/store/jobEnqueue.js';
import { claimJobs, completeJobs, heartbeatJobs } from '../../src/store/jobQueue.js';
import { type JobRecord } from '../../src/store/jobRecord.js';
import { upsertDiscovered } from '../../src/store/syncStatus/discovered.js';
import { getSyncStatus } from '../../src/store/syncStatus/queries.js';
import { applyTryResult } from '../../src/worker/jobOutcome.js';
import { silentLogger } from '../../src/log/logger.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { CrmRateLimitedError } from '../../src/crm/errors.js';
import { createDbInbox } from '../../src/worker/inbox.js';
import {
  ORPHAN_DRAFTS_AFTER_MS,
  requeueOrphanDrafts,
  STRANDED_AFTER_MS,
} from '../../src/worker/housekeeping.js';
import { CONFIG_DIR } from '../cli/helpers.js';
import { DATABASE_KINDS, useMigratedDatabase } from '../store/helpers.js';
import { startBatchStack, type BatchStack } from './batchStack.js';

const JANE = { name: 'Jane Doe', email: 'jane.doe@acme.example', company: 'Acme Corp' };
const draft = (id: string) => ({ id, subject: `Follow-up ${id}`, body: 'Next steps...', to: [JANE.email] });

describe.each(DATABASE_KINDS)('drafts stored for a call already written back (%s)', (kind) => {
  const get = useMigratedDatabase(kind);
  let stack: BatchStack;
  let hs: HubSpotSandbox;
  let adapter: CrmAdapter;
  let mapping: Mapping;
  beforeAll(async () => {
    [stack, hs] = await Promise.all([startBatchStack(), startHubSpotSandbox()]);
    adapter = createHubSpotAdapter({ config: { baseUrl: hs.url, accessToken: hs.accessToken } });
    mapping = loadMappings(CONFIG_DIR, 'hubspot');
  });
  afterAll(async () => {
    await stack?.close();
    await hs?.close();
  });

  const db = () => get().db.prisma;
  const deps = () => stack.deps(db(), adapter, mapping);
  const itemOf = (job: JobRecord): WritebackItem => ({
    jobId: job.id,
    payload: job.payload as WritebackJobPayload,
    priority: 'writeback',
    run: createJobRun({ jobId: job.id, epoch: job.epoch }),
  });
  const claim = async (workerId: string, now = new Date()) =>
    claimJobs(db(), { workerId, limit: 10, leaseMs: 60_000, now });
  /** Runs `job` to its end, as the runner does; its result. */
  const runJob = async (job: JobRecord, workerId: string) => {
    const result = (await runWritebackBatch(deps(), [itemOf(job)])).get(job.id);
    await completeJobs(db(), { ids: [job.id], epochs: [job.epoch], workerId, now: new Date() });
    return result;
  };
  const queuePoll = (callId: string) =>
    enqueueJob(db(), {
      kind: 'writeback',
      key: writebackJobKey(callId),
      payload: { callId, reason: 'poll', call: null } satisfies WritebackJobPayload,
      priority: JOB_PRIORITY.backfill,
      now: new Date(Date.now() - 1_000),
    });

  /**
   * An analysed call whose activity a run wrote to the CRM with the generation stamp, then stopped
   * before recording anything here (the next run adopts it).
   */
  async function writtenElsewhere(): Promise<string> {
    const callId = await stack.analysedCall(JANE);
    await adapter.upsertActivities([
      {
        callId,
        properties: {
          crmsync_call_id: callId,
          hs_timestamp: new Date().toISOString(),
          [FOLLOWUPS_GENERATED_AT_FIELD.hubspot]: new Date().toISOString(),
        },
        links: {},
      },
    ]);
    return callId;
  }

  const inHubSpot = (type: 'calls' | 'notes', callId: string) =>
    [...hs.state.store.objects[type].values()].filter((o) => o.properties.crmsync_call_id === callId);

  /** The call's drafts are in the CRM once each, recorded here, and nothing more was written or asked. */
  async function expectDraftsWrittenOnce(callId: string, draftIds: string[]): Promise<void> {
    const notes = inHubSpot('notes', callId);
    expect(notes.map((n) => n.properties.crmsync_followup_id).sort()).toEqual(
      draftIds.map((id) => `${callId}:${id}`).sort(),
    );
    expect(inHubSpot('calls', callId)).toHaveLength(1);
    const stored = await listFollowupDrafts(db(), callId);
    expect(stored.map((d) => d.crmId).sort()).toEqual(notes.map((n) => n.id).sort());
    expect([...(await getSyncStatus(db(), callId, 'hubspot'))!.crmFollowupIds].sort()).toEqual(
      notes.map((n) => n.id).sort(),
    );
    expect(stack.generations(callId)).toBe(0);
    // Nothing left for the sweep, however late it looks.
    const later = Date.now() + STRANDED_AFTER_MS + 1_000;
    expect(await requeueOrphanDrafts(db(), { crm: 'hubspot', nowMs: later })).toEqual([]);
  }

  /** The one job due now: the call's drafts job, at write-back priority. */
  async function theDraftsJob(callId: string, now = new Date()): Promise<JobRecord> {
    const due = await claim('W', now);
    expect(due).toHaveLength(1);
    expect(due[0]).toMatchObject({
      key: writebackJobKey(callId),
      priority: JOB_PRIORITY.writeback,
      payload: { callId, reason: DRAFTS_JOB_REASON },
    });
    return due[0]!;
  }

  /** Run A claims the job, its lease lapses, and run B claims it under a newer epoch. */
  async function leaseTakenOver() {
    const [jobA] = await claim('A');
    await heartbeatJobs(db(), {
      ids: [jobA!.id],
      epochs: [jobA!.epoch],
      workerId: 'A',
      leaseMs: -1_000,
      now: new Date(),
    });
    const [jobB] = await claim('B');
    expect(jobB).toMatchObject({ id: jobA!.id, epoch: jobA!.epoch + 1 });
    return { jobA: jobA!, jobB: jobB! };
  }

  it('writes the answer of a run that lost its lease, heard after the adoption, in one job run', async () => {
    const callId = await writtenElsewhere();
    await queuePoll(callId);
    // Run A holds the job; its lease lapses and run B (a newer epoch) adopts the call.
    const { jobA, jobB } = await leaseTakenOver();
    expect(await runJob(jobB, 'B')).toMatchObject({
      kind: 'done',
      detail: expect.stringMatching(/^found in the CRM/),
    });
    expect(await getSyncStatus(db(), callId, 'hubspot')).toMatchObject({
      state: 'written_back',
      crmFollowupIds: [],
    });

    // A's follow-up answer comes late: stored (the Service's drafts), settling nothing.
    const fenceA = { jobId: jobA.id, epoch: jobA.epoch };
    const answer = saveFollowupAnswer(db(), {
      callId,
      crm: 'hubspot',
      drafts: [draft('a1'), draft('a2')],
      now: new Date(),
      fence: fenceA,
    });
    await expect(answer).rejects.toBeInstanceOf(LeaseLostError);

    const job = await theDraftsJob(callId);
    expect(await runJob(job, 'W')).toEqual({ kind: 'done', detail: '2 follow-up(s) attached' });
    await expectDraftsWrittenOnce(callId, ['a1', 'a2']);
  });

  it('writes drafts a followup.generated stored while the adopting job was queued', async () => {
    const callId = await writtenElsewhere();
    const { id } = await queuePoll(callId);
    const inbox = createDbInbox({ db: db(), crm: 'hubspot' });
    const receivedAt = Date.now();
    const data = { call_id: callId, followup: draft('g1') };
    const rawBody = JSON.stringify({
      id: `evt_${callId}`,
      type: 'followup.generated',
      created_at: new Date(receivedAt).toISOString(),
      data,
    });
    await inbox.store({
      eventId: `evt_${callId}`,
      type: 'followup.generated',
      callId,
      rawBody,
      outcome: 'accepted',
      receivedAt,
    });
    // The delivery joined the queued job rather than queue a second.
    expect(
      await db().job.findMany({ where: { key: writebackJobKey(callId) }, select: { id: true } }),
    ).toEqual([{ id: BigInt(id) }]);

    const [adopting] = await claim('B');
    expect(await runJob(adopting!, 'B')).toMatchObject({
      kind: 'done',
      detail: expect.stringMatching(/^found in the CRM/),
    });
    expect(inHubSpot('notes', callId)).toEqual([]);

    const job = await theDraftsJob(callId);
    expect(await runJob(job, 'W')).toEqual({ kind: 'done', detail: '1 follow-up(s) attached' });
    await expectDraftsWrittenOnce(callId, ['g1']);
  });

  it('leaves the sweep as the safety net: drafts no job writes are queued after ORPHAN_DRAFTS_AFTER_MS', async () => {
    const callId = await writtenElsewhere();
    await queuePoll(callId);
    const [adopting] = await claim('B');
    expect(await runJob(adopting!, 'B')).toMatchObject({ kind: 'done' });
    // Stored without a job (as if the drafts job had failed for good).
    const storedAt = Date.now();
    await saveFollowupDrafts(db(), callId, [draft('s1')], new Date(storedAt));
    expect(await claim('W')).toEqual([]);

    const sweep = (afterMs: number) =>
      requeueOrphanDrafts(db(), { crm: 'hubspot', nowMs: storedAt + afterMs });
    expect(await sweep(ORPHAN_DRAFTS_AFTER_MS - 1_000)).toEqual([]);
    expect(await sweep(ORPHAN_DRAFTS_AFTER_MS)).toEqual([{ callId, state: 'written_back', gaveUp: false }]);
    const job = await theDraftsJob(callId, new Date(storedAt + ORPHAN_DRAFTS_AFTER_MS));
    expect(await runJob(job, 'W')).toEqual({ kind: 'done', detail: '1 follow-up(s) attached' });
    await expectDraftsWrittenOnce(callId, ['s1']);
  });

  // Issue 22, left from the fencing work: the records of a run after its CRM write are fenced too.
  it('records nothing for a drafts run that lost its lease after its CRM write; the next run rewrites the same notes', async () => {
    const callId = await writtenElsewhere();
    await queuePoll(callId);
    const [adopting] = await claim('B');
    expect(await runJob(adopting!, 'B')).toMatchObject({ kind: 'done' });
    const late = saveFollowupAnswer(db(), {
      callId,
      crm: 'hubspot',
      drafts: [draft('f1')],
      now: new Date(),
      fence: { jobId: adopting!.id, epoch: adopting!.epoch },
    });
    await expect(late).rejects.toBeInstanceOf(LeaseLostError);

    // Run A writes the note, and loses its lease before it records it: run B holds the job now.
    const jobA = await theDraftsJob(callId);
    let jobB: JobRecord | undefined;
    const losing: CrmAdapter = {
      ...adapter,
      upsertFollowups: async (batch) => {
        const written = await adapter.upsertFollowups(batch);
        await heartbeatJobs(db(), {
          ids: [jobA.id],
          epochs: [jobA.epoch],
          workerId: 'W',
          leaseMs: -1_000,
          now: new Date(),
        });
        [jobB] = await claim('B');
        return written;
      },
    };
    const resultA = (await runWritebackBatch(stack.deps(db(), losing, mapping), [itemOf(jobA)])).get(jobA.id);
    expect((resultA as { error: unknown }).error).toBeInstanceOf(LeaseLostError);
    expect(jobB).toMatchObject({ id: jobA.id, epoch: jobA.epoch + 1 });
    expect((await listFollowupDrafts(db(), callId)).map((d) => d.crmId)).toEqual([null]);
    expect(await getSyncStatus(db(), callId, 'hubspot')).toMatchObject({ crmFollowupIds: [] });

    // B upserts the draft again: the same note, now recorded.
    expect(await runJob(jobB!, 'B')).toEqual({ kind: 'done', detail: '1 follow-up(s) attached' });
    await expectDraftsWrittenOnce(callId, ['f1']);
  });

  it('records no error on the call when a run that lost its lease ends waiting (rate limited)', async () => {
    const callId = await writtenElsewhere();
    await queuePoll(callId);
    const { jobA, jobB } = await leaseTakenOver();
    await upsertDiscovered(db(), { callId, crm: 'hubspot', now: new Date() });

    const outcome = {
      db: db(),
      crm: 'hubspot' as const,
      workerId: 'A',
      logger: silentLogger,
      metrics: createMetrics({ defaultMetrics: false }),
    };
    const limited = new CrmRateLimitedError('ten-second limit', 'hubspot', 429, 2_000);
    await applyTryResult(outcome, jobA, callId, { kind: 'error', error: limited }, Date.now());
    expect(await getSyncStatus(db(), callId, 'hubspot')).toMatchObject({ lastErrorCode: null, attempts: 0 });
    expect(await db().job.findUniqueOrThrow({ where: { id: BigInt(jobB.id) } })).toMatchObject({
      state: 'running',
      lockedBy: 'B',
    });
    await completeJobs(db(), { ids: [jobB.id], epochs: [jobB.epoch], workerId: 'B', now: new Date() });
  });
});
