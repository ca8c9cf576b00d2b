/**
 * The activity's follow-up generation stamp (src/mapping/writeback.ts, followupsGeneratedAtField):
 * the activity is written with it before the Service is asked for follow-ups, so the CRM itself
 * records that a generation was asked for, and a fresh database adopts the call instead of asking
 * again (crmLedger.ts holdsEverything), whether drafts came back, got lost, or carry no call id.
 *
 * A CRM that does not have the field yet (an upgrade before `doctor --fix`, or before the admin
 * created it in Salesforce) refuses the write naming it: the activity then goes without the stamp
 * (fieldGaps.ts) and the call carries this warning, rather than every call failing until the field exists.
 */
import type { ActivityWrite } from '../crm/types.js';
import { followupsGeneratedAtField } from '../mapping/index.js';
import type { Mapping } from '../mapping/types.js';

export const FOLLOWUP_STAMP_MISSING = 'FOLLOWUP_STAMP_MISSING';

/** `activity` carrying the stamp at `nowMs`; as it is when the mapping writes no follow-ups. */
export function stamped(mapping: Mapping, activity: ActivityWrite, nowMs: number): ActivityWrite {
  const field = followupsGeneratedAtField(mapping);
  if (!field) return activity;
  return { ...activity, properties: { ...activity.properties, [field]: new Date(nowMs).toISOString() } };
}

/**
 * The warning a call carries when the CRM lacks the stamp field, or undefined when `field` is not
 * the stamp (the field left out like any optional one, src/pipelines/fieldGaps.ts).
 */
export function stampMissingWarning(mapping: Mapping, field: string): string | undefined {
  const stamp = followupsGeneratedAtField(mapping);
  if (!stamp || stamp.toLowerCase() !== field.toLowerCase()) return undefined;
  const fix =
    mapping.crm === 'hubspot'
      ? 'run `crm-sync doctor --fix`'
      : `create ${mapping.writeback.activity.object}.${stamp} (Date/Time; docs/install.md)`;
  return `${FOLLOWUP_STAMP_MISSING}: the CRM has no ${stamp} field, so the activity does not record that follow-ups were asked for (a database restored empty could ask again); ${fix}`;
}

/**
 * Whether the activity's fields read the drafts (`followups` in an expression): then an activity
 * written before they were generated is written again once they are there.
 */
export function activityReadsFollowups(mapping: Mapping): boolean {
  return mapping.writeback.activity.fields.some((f) => /\bfollowups\b/.test(f.source));
}
