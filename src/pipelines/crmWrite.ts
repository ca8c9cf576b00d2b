/**
 * The CRM half of a write-back batch: activities in one batch upsert (those about to ask for
 * follow-ups with the generation stamp), then the follow-up requests, then the drafts in another
 * batch upsert, then each call's sync row. A call whose mapping or write fails gets its own error;
 * the rest of the batch goes on.
 */
import type { ActivityWrite, FollowupWrite, WriteResult } from '../crm/types.js';
import { buildActivity, buildFollowups } from '../mapping/index.js';
import { listFollowupDraftsOf } from '../store/followupRepo.js';
import { followupsWrittenUpdate, markFollowupsWritten } from '../store/followupWrites.js';
import {
  getSyncStatuses,
  mergeWarnings,
  transitionSyncStatus,
  transitionSyncStatuses,
  type SyncStatusRecord,
} from '../store/syncStatusRepo.js';
import { syncDealSignals } from './dealSignals.js';
import type { PipelineDeps } from './deps.js';
import { generateAfterStamp, upsertActivities } from './activityWrite.js';
import { writeObject } from '../crm/fieldGaps.js';
import { fieldGapWarnings, writeAroundGaps } from './fieldGaps.js';
import { stamped } from './followupStamp.js';
import { moveTo } from './moveTo.js';
import type { PreparedWrite, WritebackResult } from './types.js';
import { sideEffect, stillGoing } from './jobRun.js';

export async function writeToCrm(
  deps: PipelineDeps,
  writes: PreparedWrite[],
  results: Map<number, WritebackResult>,
): Promise<void> {
  const { db, crmName: crm, clock } = deps;
  const fail = (w: PreparedWrite, error: unknown) => results.set(w.item.jobId, { kind: 'error', error });
  // Before each side effect: the calls whose run was told to stop (lost lease, worker stopping) leave.
  const going = (list: PreparedWrite[]) => {
    const { going: on, stopped } = stillGoing(list, (w) => w.item.run);
    for (const { item, reason } of stopped) fail(item, reason);
    return on;
  };
  const input = (w: PreparedWrite) => ({
    call: w.call,
    analysis: w.analysis,
    followups: w.drafts,
    lookup: w.lookup,
    now: clock.now(),
    warnings: w.warnings,
  });

  // The batch's rows, read once: the steps below change only their state (and write-back
  // fields at the very end), never the ids and lists they read from them.
  const statuses = await getSyncStatuses(
    db,
    writes.map((w) => w.callId),
    crm,
  );

  // 1. Activities: mark each call writing_back before its first CRM write, so a crash is visible;
  // the batch's calls in one statement, but a replay's (written_back: two moves) on its own.
  const activities: ActivityWrite[] = [];
  let live = writes;
  const full = writes.filter((x) => !x.followupsOnly);
  const direct = full.filter((w) => {
    const state = statuses.get(w.callId)?.state;
    return state !== undefined && state !== 'writing_back' && state !== 'written_back';
  });
  // A failed statement fails each of its calls, as their own moves would have.
  const moved = await transitionSyncStatuses(db, {
    callIds: direct.map((w) => w.callId),
    crm,
    to: 'writing_back',
    now: new Date(clock.now()),
    detail: 'writing to the CRM',
    fences: direct.map((w) => w.item.run?.fence),
  }).catch((error: unknown) => direct.map(() => error as Error));
  const moveErrors = new Map(direct.flatMap((w, i) => (moved[i] === true ? [] : [[w, moved[i]!] as const])));
  for (const w of full) {
    try {
      const status = statuses.get(w.callId);
      const moveError = moveErrors.get(w);
      if (moveError) throw moveError;
      if (status && !direct.includes(w))
        await moveTo(deps, status, 'writing_back', 'writing to the CRM', w.item.run?.fence);
      const activity = await buildActivity(deps.mapping, input(w));
      // Stamped before the Service is asked (followupStamp.ts).
      activities.push(w.generate ? stamped(deps.mapping, activity, clock.now()) : activity);
    } catch (error) {
      fail(w, error);
    }
  }
  live = going(live.filter((w) => !results.has(w.item.jobId)));
  const activityResults = await upsertActivities(
    deps,
    activities.filter((a) => live.some((w) => w.callId === a.callId)),
    live,
  );

  // 2. Follow-ups asked for, now that each such call's activity holds the stamp. Their rows are
  // read again: the answer may have added a warning (FOLLOWUP_UNCERTAIN) the move must keep.
  await generateAfterStamp(deps, live, activityResults, fail);
  live = live.filter((w) => !results.has(w.item.jobId));
  const asked = live.filter((w) => w.generate).map((w) => w.callId);
  if (asked.length > 0) for (const [id, row] of await getSyncStatuses(db, asked, crm)) statuses.set(id, row);

  // Deal-level signals of the calls whose activity is now in the CRM (src/pipelines/dealSignals.ts).
  live = going(live);
  const signalled = live.filter((w) => activityResults.get(w.callId)?.ok);
  await sideEffect(
    signalled.map((w) => w.item.run),
    () =>
      syncDealSignals(
        deps,
        signalled.map((w) => ({ call: w.call, analysis: w.analysis, dealId: w.lookup.deals[0]?.id })),
      ),
  );

  // 3. Follow-up drafts not yet written, linked to the activity.
  const followups: FollowupWrite[] = [];
  const drafts = await listFollowupDraftsOf(
    db,
    live.map((w) => w.callId),
  );
  for (const w of live) {
    const written = activityResults.get(w.callId);
    if (written && !written.ok) {
      fail(w, written.error);
      continue;
    }
    try {
      const status = statuses.get(w.callId);
      const activityId = written?.ok ? written.id : (status?.crmActivityId ?? undefined);
      const pending = new Set(
        (drafts.get(w.callId) ?? []).filter((d) => d.crmId === null).map((d) => d.draftId),
      );
      for (const f of await buildFollowups(deps.mapping, input(w))) {
        if (pending.has(f.draftId)) followups.push({ ...f, activityId });
      }
    } catch (error) {
      fail(w, error);
    }
  }
  live = going(live.filter((w) => !results.has(w.item.jobId)));
  const writing = followups.filter((f) => live.some((w) => w.callId === f.callId));
  const runsOf = (batch: FollowupWrite[]) =>
    live.filter((w) => batch.some((f) => f.callId === w.callId)).map((w) => w.item.run);
  // Drafts leave out the fields the CRM lacks (fieldGaps.ts), never their key: a draft without
  // its key field would be written again on every retry, so that refusal fails the call instead.
  const { results: followupResults, omitted } = await writeAroundGaps(deps, writing, {
    keyOf: (f) => f.key,
    objectOf: (f) => writeObject(deps.crmName, f.kind),
    send: (batch) => sideEffect(runsOf(batch), () => deps.crm.upsertFollowups(batch)),
  });
  for (const f of writing) {
    const w = live.find((x) => x.callId === f.callId);
    for (const warning of fieldGapWarnings(deps.mapping, omitted.get(f.key) ?? []))
      if (w && !w.warnings.includes(warning)) w.warnings.push(warning);
  }

  // 4. Each call's row.
  for (const w of live) {
    try {
      const mine = writing.filter((f) => f.callId === w.callId);
      const failed = mine.map((f) => followupResults.get(f.key)).find((r) => r && !r.ok);
      const done = mine.flatMap((f) => {
        const r = followupResults.get(f.key);
        return r?.ok ? [{ draftId: f.draftId, crmId: r.id }] : [];
      });
      if (failed && !failed.ok) {
        // The drafts that did go in stay recorded, so the retry does not write them again.
        await markFollowupsWritten(db, w.callId, done, new Date(clock.now()), { fence: w.item.run?.fence });
        fail(w, failed.error);
        continue;
      }
      await finishCall(deps, w, statuses.get(w.callId), activityResults.get(w.callId), done);
      results.set(w.item.jobId, {
        kind: 'done',
        detail: w.followupsOnly ? `${done.length} follow-up(s) attached` : 'written back',
      });
    } catch (error) {
      fail(w, error);
    }
  }
}

async function finishCall(
  deps: PipelineDeps,
  w: PreparedWrite,
  status: SyncStatusRecord | undefined,
  written: WriteResult | undefined,
  followups: { draftId: string; crmId: string }[],
): Promise<void> {
  const { db, crmName: crm, clock } = deps;
  const now = new Date(clock.now());
  const allFollowupIds = [...new Set([...(status?.crmFollowupIds ?? []), ...followups.map((f) => f.crmId)])];
  if (w.followupsOnly) {
    await markFollowupsWritten(db, w.callId, followups, now, {
      fence: w.item.run?.fence,
      call: { crm, warnings: mergeWarnings(status?.warnings ?? [], w.warnings) },
    });
    return;
  }
  const activity = written?.ok ? written : undefined;
  await transitionSyncStatus(db, {
    callId: w.callId,
    crm,
    to: 'written_back',
    now,
    detail: activity ? `activity ${activity.id} ${activity.created ? 'created' : 'updated'}` : 'written',
    set: {
      writtenBackAt: now,
      crmActivityId: activity?.id ?? status?.crmActivityId ?? null,
      crmContactId: w.lookup.contact?.id ?? null,
      crmCompanyId: w.lookup.company?.id ?? null,
      crmDealId: w.lookup.deals[0]?.id ?? null,
      crmFollowupIds: allFollowupIds,
      matchDecision: w.lookup.decision,
      warnings: mergeWarnings(status?.warnings ?? [], w.warnings),
    },
    // The drafts' CRM ids, in the same statement.
    alongside: followupsWrittenUpdate(w.callId, followups, now) ?? undefined,
    fence: w.item.run?.fence,
  });
  if (w.warnings.length > 0) {
    deps.logger.warn({ callId: w.callId, warnings: w.warnings }, 'written back without some optional fields');
  }
}
