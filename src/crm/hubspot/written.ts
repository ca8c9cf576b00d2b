import { draftIdOfKey } from '../draftKey.js';
import type { WrittenCall, WrittenQuery } from '../types.js';
import { searchGroups } from './batchReads.js';
import type { Runner } from './runner.js';

/**
 * `findWritten` on HubSpot: which calls already have their call engagement and follow-up drafts.
 * One search of calls by the unique call-id property with `IN` per 100 call ids, then, for the
 * calls found, one search of the drafts (notes or tasks) by the call id they carry. The drafts are
 * linked to the contact, company and deal only (the association types of HubSpot's v4 "Association
 * type id values" table this adapter writes), not to the call, so the draft's own call-id property
 * is the link: not unique (a call has several drafts), and searchable with `IN` in one request.
 * Searches count against HubSpot's 5 searches per second (search guide, "Limitations"): a batch
 * of up to 100 calls costs two, plus one per further page of 200 drafts.
 */
export async function findWrittenCalls(
  run: Runner,
  callIds: string[],
  query: WrittenQuery,
  defaults: { callIdProperty: string; followupIdProperty: string },
): Promise<Map<string, WrittenCall>> {
  const out = new Map<string, WrittenCall>();
  const unique = [...new Set(callIds.filter((id) => id !== ''))];
  if (unique.length === 0) return out;
  const activityField = query.activityIdField ?? defaults.callIdProperty;
  // A property the portal lacks (the stamp before `doctor --fix`) is left out of the answer, not refused.
  const stamp = query.generatedAtField;
  const activities = await searchGroups(
    run,
    'calls',
    activityField,
    unique.map((id) => ({ key: id, values: [id] })),
    stamp ? [activityField, stamp] : [activityField],
  );
  for (const id of unique) {
    const found = activities.get(id)?.[0];
    const generatedAt = stamp ? found?.properties[stamp] : undefined;
    if (found) {
      out.set(id, {
        activityId: found.id,
        followups: [],
        ...(generatedAt ? { followupsGeneratedAt: generatedAt } : {}),
      });
    }
  }

  // A draft is written only after its call's activity, so only calls with one can have drafts.
  const drafts = query.followups;
  if (!drafts || out.size === 0) return out;
  const type = drafts.kind === 'task' ? 'tasks' : 'notes';
  const idField = drafts.idField ?? defaults.followupIdProperty;
  const found = await searchGroups(
    run,
    type,
    drafts.callIdField,
    [...out.keys()].map((id) => ({ key: id, values: [id] })),
    [idField, drafts.callIdField],
  );
  for (const [callId, records] of found) {
    const written = out.get(callId)!;
    for (const r of records) {
      const key = r.properties[idField];
      if (key) written.followups.push({ draftId: draftIdOfKey(key, callId), crmId: r.id });
    }
  }
  return out;
}
