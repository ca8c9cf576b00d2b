/**
 * The activity's follow-up generation stamp (src/mapping/writeback.ts, followupsGeneratedAtField):
 * the activity is written with it before the Service is asked for follow-ups, so the CRM itself
 * records that a generation was asked for, and a fresh database adopts the call instead of asking
 * again (crmLedger.ts holdsEverything), whether drafts came back, got lost, or carry no call id.
 *
 * A CRM that does not have the field yet (an upgrade before `doctor --fix`, or before the admin
 * created it in Salesforce) refuses the write naming it: the activity then goes without the stamp
 * and the call carries a warning, rather than every call failing until the field exists.
 */
import { CrmRejectedError } from '../crm/errors.js';
import type { ActivityWrite, WriteResult } from '../crm/types.js';
import { followupsGeneratedAtField } from '../mapping/index.js';
import type { Mapping } from '../mapping/types.js';

export const FOLLOWUP_STAMP_MISSING = 'FOLLOWUP_STAMP_MISSING';

/** `activity` carrying the stamp at `nowMs`; as it is when the mapping writes no follow-ups. */
export function stamped(mapping: Mapping, activity: ActivityWrite, nowMs: number): ActivityWrite {
  const field = followupsGeneratedAtField(mapping);
  if (!field) return activity;
  return { ...activity, properties: { ...activity.properties, [field]: new Date(nowMs).toISOString() } };
}

/** Whether `result` is the CRM refusing the stamp field (it does not have it). */
export function refusedStamp(mapping: Mapping, result: WriteResult | undefined): boolean {
  const field = followupsGeneratedAtField(mapping)?.toLowerCase();
  return (
    field !== undefined &&
    result?.ok === false &&
    result.error instanceof CrmRejectedError &&
    result.error.fields.some((f) => f.toLowerCase() === field)
  );
}

/** `activity` without the stamp, and the warning its call carries. */
export function unstamped(
  mapping: Mapping,
  activity: ActivityWrite,
): { activity: ActivityWrite; warning: string } {
  const field = followupsGeneratedAtField(mapping)!;
  const properties = Object.fromEntries(Object.entries(activity.properties).filter(([k]) => k !== field));
  const fix =
    mapping.crm === 'hubspot'
      ? 'run `crm-sync doctor --fix`'
      : `create ${mapping.writeback.activity.object}.${field} (Date/Time; docs/install.md)`;
  return {
    activity: { ...activity, properties },
    warning: `${FOLLOWUP_STAMP_MISSING}: the CRM has no ${field} field, so the activity does not record that follow-ups were asked for (a database restored empty could ask again); ${fix}`,
  };
}

/**
 * Whether the activity's fields read the drafts (`followups` in an expression): then an activity
 * written before they were generated is written again once they are there.
 */
export function activityReadsFollowups(mapping: Mapping): boolean {
  return mapping.writeback.activity.fields.some((f) => /\bfollowups\b/.test(f.source));
}
