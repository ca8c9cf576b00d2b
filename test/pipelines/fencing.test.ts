/**
 * A rolling deploy's race (issue 22, defect 2), with real parts: run A of a write-back job asks the
 * Service for follow-ups and, while its request is out, loses its lease; run B (the job claimed
 * again, a newer epoch) finds the claim abandoned, settles it and writes the call without drafts.
 * Then A's answer arrives. A's stale epoch must not settle anything, its drafts (the Service's)
 * are kept, and their job, queued with them, writes them to the CRM. Before fencing, A's answer
 * settled the claim over B's, and the drafts were never written; before the drafts job, only the
 * housekeeping sweep wrote them, minutes later.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHubSpotAdapter } from '../../src/crm/hubspot/index.js';
import { loadMappings } from '../../src/mapping/index.js';
import { FOLLOWUP_UNCERTAIN } from '../../src/pipelines/followups.js';
import { createJobRun } from '../../src/pipelines/jobRun.js';
import { writebackJobKey, JOB_PRIORITY, type WritebackJobPayload } from '../../src/store/jobKinds.js';
import type { WritebackItem } from '../../src/pipelines/types.js';
import { runWritebackBatch } from '../../src/pipelines/writeback.js';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { DRAFTS_JOB_REASON } from '../../src/store/draftsJob.js';
import { LeaseLostError } from '../../src/store/fence.js';
import { listFollowupDrafts } from '../../src/store/followupRepo.js';
import { enqueueJob } from '../../src/store/jobEnqueue.js';
import { claimJobs, completeJobs, heartbeatJobs } from '../../src/store/jobQueue.js';
import { type JobRecord } from '../../src/store/jobRecord.js';
import { getSyncStatus } from '../../src/store/syncStatus/queries.js';
import { requeueOrphanDrafts, STRANDED_AFTER_MS } from '../../src/worker/housekeeping.js';
import { CONFIG_DIR } from '../cli/helpers.js';
import { DATABASE_KINDS, useMigratedDatabase } from '../store/helpers.js';
import { answering, startBatchStack, type BatchStack } from './batchStack.js';

const JANE = { name: 'Jane Doe', email: 'jane.doe@acme.example', company: 'Acme Corp' };
const DRAFT = { id: 'late-1', subject: 'Thanks for today', body: 'Next steps...', to: [JANE.email] };

describe.each(DATABASE_KINDS)('a run that lost its lease mid-request (%s)', (kind) => {
  const get = useMigratedDatabase(kind);
  let stack: BatchStack;
  let hs: HubSpotSandbox;
  beforeAll(async () => {
    stack = await startBatchStack();
    hs = await startHubSpotSandbox();
  });
  afterAll(async () => {
    await stack?.close();
    await hs?.close();
  });

  const itemOf = (job: JobRecord): WritebackItem => ({
    jobId: job.id,
    payload: job.payload as WritebackJobPayload,
    priority: 'writeback',
    run: createJobRun({ jobId: job.id, epoch: job.epoch }),
  });
  const claim = async (workerId: string, now = new Date()) => {
    const [job] = await claimJobs(get().db.prisma, { workerId, limit: 1, leaseMs: 60_000, now });
    return job!;
  };

  it('settles nothing with its stale epoch; the drafts it stored are written by their job at once', async () => {
    const db = get().db.prisma;
    const adapter = createHubSpotAdapter({ config: { baseUrl: hs.url, accessToken: hs.accessToken } });
    const mapping = loadMappings(CONFIG_DIR, 'hubspot');
    const callId = await stack.analysedCall(JANE);
    await enqueueJob(db, {
      kind: 'writeback',
      key: writebackJobKey(callId),
      payload: { callId, reason: 'poll' } satisfies WritebackJobPayload,
      priority: JOB_PRIORITY.writeback,
      now: new Date(Date.now() - 1_000),
    });

    // Run A asks; its answer waits.
    let asked!: () => void;
    const askedA = new Promise<void>((resolve) => (asked = resolve));
    let answer!: (drafts: unknown) => void;
    const answerA = new Promise((resolve) => (answer = resolve));
    const depsA = stack.deps(db, adapter, mapping, {
      service: answering(stack.service, () => (asked(), answerA)),
    });
    const jobA = await claim('A');
    const itemA = itemOf(jobA);
    const runA = runWritebackBatch(depsA, [itemA]);
    await askedA;

    // A's lease lapses and the job is claimed again: run B, a newer epoch.
    await heartbeatJobs(db, {
      ids: [jobA.id],
      epochs: [jobA.epoch],
      workerId: 'A',
      leaseMs: -1_000,
      now: new Date(),
    });
    const jobB = await claim('B');
    expect(jobB).toMatchObject({ id: jobA.id, epoch: jobA.epoch + 1 });
    let askedB = 0;
    const depsB = stack.deps(db, adapter, mapping, {
      service: answering(stack.service, () => (askedB++, Promise.resolve([]))),
    });
    expect((await runWritebackBatch(depsB, [itemOf(jobB)])).get(jobB.id)).toMatchObject({ kind: 'done' });
    expect(askedB).toBe(0);
    const row = () => db.syncStatus.findUniqueOrThrow({ where: { callId_crm: { callId, crm: 'hubspot' } } });
    const settledByB = await row();
    expect(settledByB).toMatchObject({ state: 'written_back' });
    expect(settledByB.warnings.join()).toContain(FOLLOWUP_UNCERTAIN);

    // A hears back: its drafts are kept, its stale epoch settles nothing and A stops there.
    answer([DRAFT]);
    const resultA = (await runA).get(jobA.id);
    expect(resultA).toMatchObject({ kind: 'error' });
    expect((resultA as { error: unknown }).error).toBeInstanceOf(LeaseLostError);
    expect(await row()).toMatchObject({
      followupsSettledAt: settledByB.followupsSettledAt,
      warnings: settledByB.warnings,
      crmFollowupIds: [],
    });
    expect((await listFollowupDrafts(db, callId)).map((d) => [d.draftId, d.crmId])).toEqual([
      ['late-1', null],
    ]);

    // A's answer queued the call's drafts job (draftsJob.ts): due as soon as B's job ends, not
    // when the housekeeping sweep would find the drafts.
    await completeJobs(db, { ids: [jobB.id], epochs: [jobB.epoch], workerId: 'B', now: new Date() });
    const drafts = await claim('B');
    expect(drafts).toMatchObject({
      priority: JOB_PRIORITY.writeback,
      payload: { callId, reason: DRAFTS_JOB_REASON },
    });
    expect((await runWritebackBatch(depsB, [itemOf(drafts)])).get(drafts.id)).toEqual({
      kind: 'done',
      detail: '1 follow-up(s) attached',
    });
    const [written] = await listFollowupDrafts(db, callId);
    expect(written?.crmId).toBeTruthy();
    expect((await getSyncStatus(db, callId, 'hubspot'))!.crmFollowupIds).toEqual([written!.crmId]);
    expect(askedB).toBe(0);
    // Nothing left to sweep.
    await completeJobs(db, { ids: [drafts.id], epochs: [drafts.epoch], workerId: 'B', now: new Date() });
    const later = Date.now() + STRANDED_AFTER_MS + 1_000;
    expect(await requeueOrphanDrafts(db, { crm: 'hubspot', nowMs: later })).toEqual([]);
  });
});
