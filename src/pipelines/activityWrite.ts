/**
 * The activity step of a write-back batch (crmWrite.ts): the activities' batch upsert, then the
 * follow-up requests of the calls whose activity now holds the generation stamp (followupStamp.ts).
 */
import type { ActivityWrite, WriteResult } from '../crm/types.js';
import { buildActivity } from '../mapping/index.js';
import type { PipelineDeps } from './deps.js';
import { generateFollowupsOnce } from './followups.js';
import { writeObject } from '../crm/fieldGaps.js';
import { fieldGapWarnings, writeAroundGaps } from './fieldGaps.js';
import { activityReadsFollowups } from './followupStamp.js';
import type { PreparedWrite } from './types.js';
import { sideEffect, stillGoing } from './jobRun.js';

/**
 * The activities' batch upsert, leaving out the fields the CRM lacks (fieldGaps.ts; the follow-up
 * generation stamp among them, followupStamp.ts); each call written without one is warned.
 */
export async function upsertActivities(
  deps: PipelineDeps,
  activities: ActivityWrite[],
  writes: PreparedWrite[],
): Promise<Map<string, WriteResult>> {
  const runOf = (a: ActivityWrite) => writes.find((w) => w.callId === a.callId)?.item.run;
  // One batch write for the calls whose run goes on; the others get the reason they stopped.
  const { going, stopped } = stillGoing(activities, runOf);
  const object = writeObject(deps.crmName, 'activity');
  const { results, omitted } = await writeAroundGaps(deps, going, {
    keyOf: (a) => a.callId,
    objectOf: () => object,
    send: (batch) => sideEffect(batch.map(runOf), () => deps.crm.upsertActivities(batch)),
  });
  for (const { item, reason } of stopped)
    results.set(item.callId, { key: item.callId, ok: false, error: reason as Error });
  for (const [callId, fields] of omitted) {
    const w = writes.find((x) => x.callId === callId);
    for (const warning of fieldGapWarnings(deps.mapping, fields))
      if (w && !w.warnings.includes(warning)) w.warnings.push(warning);
  }
  return results;
}

/**
 * Asks for the follow-ups of the calls that need them and whose activity (with the stamp) is in
 * the CRM; a call whose request fails gets its error. When the activity's fields read the drafts,
 * those activities are written again with them.
 */
export async function generateAfterStamp(
  deps: PipelineDeps,
  writes: PreparedWrite[],
  activityResults: Map<string, WriteResult>,
  fail: (w: PreparedWrite, error: unknown) => void,
): Promise<void> {
  const asking = writes.filter((w) => w.generate && activityResults.get(w.callId)?.ok);
  await Promise.all(
    asking.map(async (w) => {
      const { email, claimed } = w.generate!;
      try {
        w.drafts = await generateFollowupsOnce(deps, {
          callId: w.callId,
          crm: deps.crmName,
          email,
          item: w.item,
          claimed,
        });
      } catch (error) {
        fail(w, error);
      }
    }),
  );
  const rewrite = asking.filter((w) => w.drafts.length > 0);
  if (rewrite.length === 0 || !activityReadsFollowups(deps.mapping)) return;
  const now = deps.clock.now();
  const activities = await Promise.all(
    rewrite.map((w) =>
      buildActivity(deps.mapping, {
        call: w.call,
        analysis: w.analysis,
        followups: w.drafts,
        lookup: w.lookup,
        now,
        warnings: w.warnings,
      }),
    ),
  );
  for (const [key, r] of await upsertActivities(deps, activities, rewrite)) {
    if (r.ok) activityResults.set(key, r);
    else
      fail(
        rewrite.find((w) => w.callId === key)!,
        r.error,
      );
  }
}
