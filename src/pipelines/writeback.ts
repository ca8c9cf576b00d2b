/**
 * call.completed / analysis.ready / followup.generated / poll / backfill: once the call is
 * analysed, write its activity (scores, objections, summary, drafts) to the CRM, exactly once per
 * call and CRM (the adapters upsert on the call id). Jobs come in batches so the CRM writes use
 * its batch APIs; the Service reads happen per call, each paid from the budget.
 */
import type { Priority } from '../budget/types.js';
import type { CrmLookup, FollowupWrite, WriteResult } from '../crm/types.js';
import { buildActivity, buildFollowups } from '../mapping/index.js';
import { ServiceNotReadyError } from '../service/errors.js';
import type { Analysis, Call } from '../service/types.js';
import {
  claimFollowupGeneration,
  listFollowupDrafts,
  saveFollowupDrafts,
  type DraftInput,
} from '../store/followupRepo.js';
import {
  getSyncStatus,
  transitionSyncStatus,
  upsertDiscovered,
  type SyncStatusRecord,
} from '../store/syncStatusRepo.js';
import { callFactsOf } from './callFacts.js';
import type { PipelineDeps } from './deps.js';
import type { WritebackJobPayload } from './jobs.js';
import { ANALYSIS_SAFETY_CHECK_MS } from './route.js';

export type WritebackResult =
  | { kind: 'done'; detail: string }
  | { kind: 'later'; delayMs: number; detail: string }
  | { kind: 'error'; error: unknown };

export interface WritebackItem {
  jobId: number;
  payload: WritebackJobPayload;
  priority: Priority;
}

type Prepared =
  | { kind: 'result'; result: WritebackResult }
  | {
      kind: 'write';
      callId: string;
      call: Call;
      analysis: Analysis;
      lookup: CrmLookup;
      drafts: DraftInput[];
      followupsOnly: boolean;
    };

/** Runs a batch of write-back jobs; one result per job id. */
export async function runWritebackBatch(
  deps: PipelineDeps,
  items: WritebackItem[],
): Promise<Map<number, WritebackResult>> {
  const results = new Map<number, WritebackResult>();
  // One batch lookup for the participants the payloads already name (list pages, events).
  const known = items.flatMap((i) => {
    const p = i.payload.call?.participant;
    return p?.email ? [{ email: p.email, name: p.name ?? undefined, company: p.company ?? undefined }] : [];
  });
  if (known.length > 1) await deps.lookups.prefetch(known);
  const prepared = await Promise.all(
    items.map((item) =>
      prepare(deps, item).catch((error: unknown): Prepared => ({
        kind: 'result',
        result: { kind: 'error', error },
      })),
    ),
  );
  const writes: { item: WritebackItem; p: Extract<Prepared, { kind: 'write' }> }[] = [];
  items.forEach((item, i) => {
    const p = prepared[i]!;
    if (p.kind === 'result') results.set(item.jobId, p.result);
    else writes.push({ item, p });
  });
  if (writes.length > 0) await writeToCrm(deps, writes, results);
  return results;
}

async function prepare(deps: PipelineDeps, item: WritebackItem): Promise<Prepared> {
  const { db, crmName: crm, clock } = deps;
  const { callId, reason } = item.payload;
  const opts = { priority: item.priority };
  if (item.payload.followup && typeof item.payload.followup.id === 'string') {
    await saveFollowupDrafts(db, callId, [item.payload.followup as DraftInput], new Date(clock.now()));
  }
  const status = await getSyncStatus(db, callId, crm);
  const replay = reason === 'replay';
  if (status && !replay) {
    if (status.state === 'written_back') {
      const pending = await unwrittenDrafts(deps, status);
      if (pending.length === 0) return done('already written back');
    } else if (status.state === 'failed' || status.state === 'skipped') {
      return done(`call is ${status.state}; replay to retry`);
    }
  }

  // The event's or list page's copy is enough when it already says analysed; else read it fresh.
  const carried = item.payload.call;
  const call = carried && carried.status === 'analyzed' ? carried : await deps.service.getCall(callId, opts);
  const now = () => new Date(clock.now());
  const { record } = await upsertDiscovered(db, { callId, crm, call: callFactsOf(call), now: now() });

  if (call.status === 'failed') return finish(deps, record, 'skipped', 'the call failed at the Service');
  if (call.status !== 'analyzed') {
    await moveTo(deps, record, 'awaiting_analysis', `call is ${call.status}`);
    return later(ANALYSIS_SAFETY_CHECK_MS, `call is ${call.status}; waiting for its analysis`);
  }
  let analysis: Analysis;
  try {
    analysis = await deps.service.getAnalysis(callId, opts);
  } catch (err) {
    if (!(err instanceof ServiceNotReadyError)) throw err;
    await moveTo(deps, record, 'awaiting_analysis', 'analysis not ready');
    return later(60_000, 'analysis not ready');
  }

  const email = call.participant?.email;
  if (!email) return finish(deps, record, 'skipped', 'the call has no participant email');
  const lookup = await deps.lookups.get({
    email,
    name: call.participant?.name ?? undefined,
    company: call.participant?.company ?? undefined,
  });
  if (lookup.matchedBy === 'none' || (!lookup.contact && !lookup.company)) {
    return finish(deps, record, 'skipped', `no CRM record matches ${email}`);
  }

  let drafts = (await listFollowupDrafts(db, callId)).map((d) => d.raw as DraftInput);
  if (
    drafts.length === 0 &&
    deps.mapping.writeback.followups &&
    (await claimFollowupGeneration(db, callId, crm, now()))
  ) {
    const generated = await deps.service.generateFollowups(callId, { recipients: [email] }, opts);
    await saveFollowupDrafts(db, callId, generated as DraftInput[], now());
    drafts = generated as DraftInput[];
  }
  const followupsOnly = record.state === 'written_back' && !replay;
  return { kind: 'write', callId, call, analysis, lookup, drafts, followupsOnly };
}

async function writeToCrm(
  deps: PipelineDeps,
  writes: { item: WritebackItem; p: Extract<Prepared, { kind: 'write' }> }[],
  results: Map<number, WritebackResult>,
): Promise<void> {
  const { db, crmName: crm, clock } = deps;
  const now = () => new Date(clock.now());
  const activities = [];
  const full = writes.filter((w) => !w.p.followupsOnly);
  for (const w of full) {
    const status = await getSyncStatus(db, w.p.callId, crm);
    if (status && status.state !== 'writing_back')
      await moveTo(deps, status, 'writing_back', 'writing to the CRM');
    activities.push(
      await buildActivity(deps.mapping, {
        call: w.p.call,
        analysis: w.p.analysis,
        followups: w.p.drafts,
        lookup: w.p.lookup,
        now: clock.now(),
      }),
    );
  }
  const activityResults = byKey(activities.length > 0 ? await deps.crm.upsertActivities(activities) : []);

  const followupWrites: FollowupWrite[] = [];
  for (const w of writes) {
    const status = await getSyncStatus(db, w.p.callId, crm);
    const written = activityResults.get(w.p.callId);
    if (written && !written.ok) continue;
    const activityId = written?.ok ? written.id : (status?.crmActivityId ?? undefined);
    const done = new Set(status?.crmFollowupIds ?? []);
    const built = await buildFollowups(deps.mapping, {
      call: w.p.call,
      analysis: w.p.analysis,
      followups: w.p.drafts,
      lookup: w.p.lookup,
      now: clock.now(),
    });
    for (const f of built)
      if (!w.p.followupsOnly || !done.has(f.draftId)) followupWrites.push({ ...f, activityId });
  }
  const followupResults = followupWrites.length > 0 ? await deps.crm.upsertFollowups(followupWrites) : [];
  const followupsByCall = new Map<string, WriteResult[]>();
  followupWrites.forEach((f, i) => {
    const r = followupResults[i];
    if (r) followupsByCall.set(f.callId, [...(followupsByCall.get(f.callId) ?? []), r]);
  });

  for (const w of writes) {
    const written = activityResults.get(w.p.callId);
    if (written && !written.ok) {
      results.set(w.item.jobId, { kind: 'error', error: written.error });
      continue;
    }
    const fResults = followupsByCall.get(w.p.callId) ?? [];
    const failed = fResults.find((r) => !r.ok);
    if (failed && !failed.ok) {
      results.set(w.item.jobId, { kind: 'error', error: failed.error });
      continue;
    }
    const status = await getSyncStatus(db, w.p.callId, crm);
    const followupIds = [
      ...new Set([...(status?.crmFollowupIds ?? []), ...fResults.flatMap((r) => (r.ok ? [r.id] : []))]),
    ];
    if (w.p.followupsOnly) {
      await db.syncStatus.update({
        where: { callId_crm: { callId: w.p.callId, crm } },
        data: { crmFollowupIds: followupIds, updatedAt: now() },
      });
      results.set(w.item.jobId, { kind: 'done', detail: `${fResults.length} follow-up(s) attached` });
      continue;
    }
    const lookup = w.p.lookup;
    await transitionSyncStatus(db, {
      callId: w.p.callId,
      crm,
      to: 'written_back',
      now: now(),
      detail: written?.ok ? `activity ${written.id} ${written.created ? 'created' : 'updated'}` : 'written',
      set: {
        writtenBackAt: now(),
        crmActivityId: written?.ok ? written.id : null,
        crmContactId: lookup.contact?.id ?? null,
        crmCompanyId: lookup.company?.id ?? null,
        crmDealId: lookup.deals[0]?.id ?? null,
        crmFollowupIds: followupIds,
      },
    });
    results.set(w.item.jobId, { kind: 'done', detail: 'written back' });
  }
}

async function unwrittenDrafts(deps: PipelineDeps, status: SyncStatusRecord): Promise<string[]> {
  if (!deps.mapping.writeback.followups) return [];
  const drafts = await listFollowupDrafts(deps.db, status.callId);
  // crm_followup_ids holds CRM ids; a draft is written when the count of CRM ids covers it.
  return drafts.length > status.crmFollowupIds.length ? drafts.map((d) => d.draftId) : [];
}

function byKey(results: WriteResult[]): Map<string, WriteResult> {
  return new Map(results.map((r) => [r.key, r]));
}

async function moveTo(
  deps: PipelineDeps,
  record: SyncStatusRecord,
  to: 'awaiting_analysis' | 'writing_back',
  detail: string,
): Promise<void> {
  if (record.state === to) return;
  await transitionSyncStatus(deps.db, {
    callId: record.callId,
    crm: deps.crmName,
    to,
    now: new Date(deps.clock.now()),
    detail,
  });
}

async function finish(
  deps: PipelineDeps,
  record: SyncStatusRecord,
  to: 'skipped',
  detail: string,
): Promise<Prepared> {
  await transitionSyncStatus(deps.db, {
    callId: record.callId,
    crm: deps.crmName,
    to,
    now: new Date(deps.clock.now()),
    detail,
  });
  return done(detail);
}

const done = (detail: string): Prepared => ({ kind: 'result', result: { kind: 'done', detail } });
const later = (delayMs: number, detail: string): Prepared => ({
  kind: 'result',
  result: { kind: 'later', delayMs, detail },
});
