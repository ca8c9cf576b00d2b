/**
 * The activity's follow-up generation stamp (src/mapping/writeback.ts, followupsGeneratedAtField),
 * written before the Service is asked, so a fresh database adopts the call instead of asking again; a
 * CRM without the field yet gets the activity without it and a warning. Why: docs/reliability.md.
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
