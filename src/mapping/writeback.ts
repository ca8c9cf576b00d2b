import type { ActivityLinks, ActivityWrite, CrmLookup, FollowupWrite } from '../crm/types.js';
import {
  baseDocument,
  evaluateFields,
  requiredMissing,
  timeBindings,
  withoutEmpty,
  type Doc,
} from './evaluate.js';
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

/** One write per follow-up draft, keyed on the draft id; none when the mapping has no `followups`. */
export async function buildFollowups(mapping: Mapping, input: WritebackInput): Promise<FollowupWrite[]> {
  const target = mapping.writeback.followups;
  if (target === null) return [];
  const base = writebackDocument(input);
  const writes: FollowupWrite[] = [];
  for (const draft of input.followups) {
    const properties = await evaluateProperties(
      mapping,
      target.fields,
      { ...base, followup: withoutEmpty(draft) },
      input,
    );
    properties[target.idField] = draft.id;
    writes.push({
      callId: input.call.id,
      draftId: draft.id,
      kind: target.kind,
      idField: target.idField,
      properties,
      links: linksOf(input.lookup),
    });
  }
  return writes;
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
  for (const [name, value] of Object.entries(result.values)) {
    // CRM fields hold scalars: lists become "a, b", objects JSON text.
    properties[name] =
      typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
        ? value
        : stringify(value);
  }
  return properties;
}
