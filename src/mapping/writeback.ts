import type {
  ActivityLinks,
  ActivityWrite,
  CrmLookup,
  CrmName,
  FollowupWrite,
  WrittenQuery,
} from '../crm/types.js';
import {
  baseDocument,
  evaluateFields,
  requiredMissing,
  timeBindings,
  withoutEmpty,
  type Doc,
} from './evaluate.js';
import { draftKey } from '../crm/draftKey.js';
import { stringify } from './transforms.js';
import type { CompiledField, Mapping, WritebackInput } from './types.js';

type Properties = Record<string, string | number | boolean | null>;

/**
 * The call's activity as CRM properties, keyed on the call id (stored in the mapping's
 * `id_field`). Throws MappingRequiredMissingError naming every empty required field.
 */
export async function buildActivity(mapping: Mapping, input: WritebackInput): Promise<ActivityWrite> {
  const target = mapping.writeback.activity;
  const doc = writebackDocument(input);
  const properties = await evaluateProperties(mapping, target.fields, doc, input);
  properties[target.idField] = input.call.id;
  return { callId: input.call.id, idField: target.idField, properties, links: linksOf(input.lookup) };
}

/**
 * One write per follow-up draft, keyed on the call id and draft id (draftKey.ts); none when the
 * mapping has no `followups`.
 */
export async function buildFollowups(mapping: Mapping, input: WritebackInput): Promise<FollowupWrite[]> {
  const target = mapping.writeback.followups;
  if (target === null) return [];
  const base = writebackDocument(input);
  const callIdField = followupCallIdField(mapping);
  const writes: FollowupWrite[] = [];
  for (const draft of input.followups) {
    const properties = await evaluateProperties(
      mapping,
      target.fields,
      { ...base, followup: withoutEmpty(draft) },
      input,
    );
    const key = draftKey(input.call.id, draft.id);
    properties[target.idField] = key;
    if (callIdField) properties[callIdField] = input.call.id;
    writes.push({
      callId: input.call.id,
      draftId: draft.id,
      key,
      kind: target.kind,
      idField: target.idField,
      properties,
      links: linksOf(input.lookup),
    });
  }
  return writes;
}

/**
 * The follow-up field that holds the draft's call id: the one named like the activity's
 * `id_field`, on a draft object other than the activity's (there that field is the unique call
 * key). crm-sync fills it with the call id whatever its `source` says, so that a fresh database
 * can find the drafts already written for a call (`findWritten`).
 */
export function followupCallIdField(mapping: Mapping): string | undefined {
  const { activity, followups } = mapping.writeback;
  if (!followups || followups.object.toLowerCase() === activity.object.toLowerCase()) return undefined;
  const key = activity.idField.toLowerCase();
  return followups.fields.find((f) => f.name.toLowerCase() === key)?.name;
}

/**
 * The activity field crm-sync stamps with the time it asks the Service for follow-ups, in the
 * activity's write just before the request: the CRM's own record that a generation happened, so a
 * fresh database never asks again, whether or not the drafts can be found (none came back, the
 * answer was lost, or the mapping leaves the call id off the drafts). Set by crm-sync whatever
 * the mapping; `doctor` checks it exists, `doctor --fix` creates it on HubSpot.
 */
export const FOLLOWUPS_GENERATED_AT_FIELD: Record<CrmName, string> = {
  hubspot: 'crmsync_followups_generated_at',
  salesforce: 'CrmSync_Followups_Generated_At__c',
};

/** The generation stamp's field for this mapping; none when it writes no follow-ups. */
export function followupsGeneratedAtField(mapping: Pick<Mapping, 'crm' | 'writeback'>): string | undefined {
  return mapping.writeback.followups ? FOLLOWUPS_GENERATED_AT_FIELD[mapping.crm] : undefined;
}

/** Where `findWritten` looks for this mapping's activity, its generation stamp and drafts. */
export function writtenQueryFor(mapping: Mapping): WrittenQuery {
  const { activity, followups } = mapping.writeback;
  const callIdField = followupCallIdField(mapping);
  const generatedAtField = followupsGeneratedAtField(mapping);
  return {
    activityIdField: activity.idField,
    ...(generatedAtField ? { generatedAtField } : {}),
    ...(followups && callIdField
      ? { followups: { kind: followups.kind, idField: followups.idField, callIdField } }
      : {}),
  };
}

export function linksOf(lookup: CrmLookup): ActivityLinks {
  const contact = lookup.contact;
  return {
    contactId: contact?.id,
    contactType: contact === null ? undefined : contact.type === 'lead' ? 'lead' : 'contact',
    companyId: lookup.company?.id,
    dealId: lookup.deals[0]?.id,
  };
}

function writebackDocument(input: WritebackInput): Doc {
  return {
    ...baseDocument(input.call, input.lookup),
    analysis: withoutEmpty(input.analysis ?? undefined),
    followups: withoutEmpty(input.followups),
  };
}

async function evaluateProperties(
  mapping: Mapping,
  fields: readonly CompiledField[],
  doc: Doc,
  input: WritebackInput,
): Promise<Properties> {
  const result = await evaluateFields(fields, doc, timeBindings(input.now), input.call.id, input.warnings);
  if (result.missing.length > 0) throw requiredMissing(mapping.file, input.call.id, result.missing);
  const properties: Properties = {};
  for (const [name, value] of Object.entries(result.values)) properties[name] = crmScalar(value);
  return properties;
}

/** CRM fields hold scalars: lists become "a, b", objects JSON text. */
export function crmScalar(value: unknown): string | number | boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? value
    : stringify(value);
}
