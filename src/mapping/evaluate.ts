import type { CrmLookup, CrmRecord } from '../crm/types.js';
import { MappingEvaluationError, MappingRequiredMissingError } from './errors.js';
import { applyTransforms, coerce, isEmpty } from './transforms.js';
import type { CallInput, CompiledField } from './types.js';

/**
 * Evaluation of compiled fields over an input document. Expressions see records flattened:
 * `contact.email` is the property, `contact.id` the record id. Empty values are absent: Salesforce
 * sends `null` for every empty field and HubSpot `null` or `""` for unset properties, so both reach
 * an expression as a missing value, which JSONata functions and `??` pass over instead of failing.
 */

export type Doc = Record<string, unknown>;

/** A record as expressions see it: its properties plus `id` (which wins over a property of that name). */
export function flatten(record: CrmRecord | null | undefined): Doc | undefined {
  if (!record) return undefined;
  return { ...(withoutEmpty(record.properties) as Doc), id: record.id };
}

/** A copy without null, undefined and blank-text values, at any depth (lists keep their other items). */
export function withoutEmpty(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((v) => !isBlank(v)).map(withoutEmpty);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!isBlank(v)) out[k] = withoutEmpty(v);
  return out;
}

const isBlank = (v: unknown) => v === null || v === undefined || (typeof v === 'string' && v.trim() === '');

/** The document shared by context and write-back expressions (see docs/mappings.md). */
export function baseDocument(call: CallInput, lookup: CrmLookup): Doc {
  const contact = flatten(lookup.contact);
  // A deal's owner as a record (`deal.owner.email`), not only its id: it need not be the contact's.
  const deals = lookup.deals.map((d) => ({ ...flatten(d), ...(d.owner ? { owner: flatten(d.owner) } : {}) }));
  return {
    call: withoutEmpty(call),
    contact,
    // Salesforce: the person may be a Lead; `lead` is set only then, `contact` in both cases.
    lead: lookup.contact?.type === 'lead' ? contact : undefined,
    company: flatten(lookup.company),
    deal: deals[0],
    owner: flatten(lookup.owner),
    lookup: {
      contact,
      company: flatten(lookup.company),
      deals,
      owner: flatten(lookup.owner),
      matchedBy: lookup.matchedBy,
    },
    crm: {
      contactId: lookup.contact?.id,
      contactType: lookup.contact?.type,
      companyId: lookup.company?.id,
      dealId: lookup.deals[0]?.id,
      ownerId: lookup.owner?.id,
      matchedBy: lookup.matchedBy,
    },
  };
}

/** $now()/$millis() answer from the injected time, so results are reproducible. */
export function timeBindings(now: number | undefined): Record<string, unknown> {
  if (now === undefined) return {};
  return { now: () => new Date(now).toISOString(), millis: () => now };
}

export interface Evaluated {
  values: Record<string, unknown>;
  /** Required fields that came out empty. */
  missing: CompiledField[];
}

/** Code of the warning an optional field leaves when it fails and is left out. */
export const FIELD_SKIPPED = 'MAPPING_FIELD_SKIPPED';

/**
 * Evaluates each field: expression, transforms, type. Empty values are left out of `values`. An
 * optional field whose expression fails, or whose value does not fit its type, is left out too and
 * named in `warnings` (one bad optional field never blocks the rest); a required one throws.
 */
export async function evaluateFields(
  fields: readonly CompiledField[],
  doc: Doc,
  bindings: Record<string, unknown>,
  callId: string,
  warnings?: string[],
): Promise<Evaluated> {
  const values: Record<string, unknown> = {};
  const missing: CompiledField[] = [];
  const problem = (field: CompiledField, message: string) => {
    if (field.required) throw new MappingEvaluationError(callId, field.path, message);
    const warning = `${FIELD_SKIPPED}: ${message}`;
    if (warnings && !warnings.includes(warning)) warnings.push(warning);
  };
  for (const field of fields) {
    let result: unknown;
    try {
      result = plain(await field.expr.evaluate(doc, bindings));
    } catch (err) {
      const message = (err as Error).message ?? String(err);
      problem(field, `${field.path}: ${message} (source: ${field.source})`);
      continue;
    }
    const coerced = coerce(applyTransforms(result, field.transforms), field.type);
    if (!coerced.ok) {
      problem(field, `${field.path}: ${coerced.message}`);
      continue;
    }
    if (isEmpty(coerced.value)) {
      if (field.required) missing.push(field);
      continue;
    }
    values[field.name] = coerced.value;
  }
  return { values, missing };
}

/** One error naming every empty required field, with where it is defined. */
export function requiredMissing(
  mappingFile: string,
  callId: string,
  missing: CompiledField[],
): MappingRequiredMissingError {
  return new MappingRequiredMissingError(
    callId,
    missing.map((f) => f.path),
    missing.map((f) => `${f.path} (${mappingFile}:${f.line}, source: ${f.source})`),
  );
}

/**
 * JSONata results as plain JSON: its sequences carry extra flags, and functions cannot be sent.
 * Dates become ISO text.
 */
function plain(value: unknown): unknown {
  if (value === undefined || typeof value === 'function') return undefined;
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date) return value.toISOString();
  return JSON.parse(JSON.stringify(value)) as unknown;
}
