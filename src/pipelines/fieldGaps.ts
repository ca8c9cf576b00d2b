/**
 * An upgrade never fails calls for an optional field a later release added: a field the CRM lacks
 * is recorded in crm_field_gap and the write goes again without it (never the upsert key). How gaps
 * are shared, retried and cleared: docs/reliability.md, "Fields the CRM lacks".
 */
import { CrmFieldMissingError } from '../crm/errors.js';
import { gapKey } from '../crm/fieldGaps.js';
import { fieldFix } from '../crm/errors.js';
import type { WriteResult } from '../crm/types.js';
import type { Mapping } from '../mapping/types.js';
import { clearFieldGaps, listFieldGaps, recordFieldGaps } from '../store/fieldGapRepo.js';
import type { PipelineDeps } from './deps.js';
import { stampMissingWarning } from './followupStamp.js';

type Props = Record<string, string | number | boolean | null>;

export interface OmittedField {
  object: string;
  field: string;
}

/** How a batch's writes are named and sent. */
export interface GapWrites<W extends { properties: Props }> {
  keyOf(w: W): string;
  objectOf(w: W): string;
  send(writes: W[]): Promise<WriteResult[]>;
}

/** Each refusal names a field more; Salesforce names one per answer. */
const MAX_ROUNDS = 8;

/**
 * Writes `writes` through `how.send`, leaving out the fields the CRM lacks; returns each write's
 * result by key and the fields each left out (for its call's warnings).
 */
export async function writeAroundGaps<W extends { properties: Props }>(
  deps: Pick<PipelineDeps, 'db' | 'crmName'>,
  writes: W[],
  how: GapWrites<W>,
): Promise<{ results: Map<string, WriteResult>; omitted: Map<string, OmittedField[]> }> {
  const omitted = new Map<string, OmittedField[]>();
  if (writes.length === 0) return { results: new Map(), omitted };
  const gaps = await listFieldGaps(deps.db, deps.crmName);
  const skip = new Set(gaps.filter((g) => !g.due).map((g) => gapKey(g.object, g.field)));
  const due = gaps.filter((g) => g.due);
  const without = (w: W, drop: (field: string) => boolean): W => {
    const object = how.objectOf(w);
    const left = Object.keys(w.properties).filter(drop);
    if (left.length === 0) return w;
    const mine = omitted.get(how.keyOf(w)) ?? [];
    omitted.set(how.keyOf(w), [...mine, ...left.map((field) => ({ object, field }))]);
    return {
      ...w,
      properties: Object.fromEntries(Object.entries(w.properties).filter(([k]) => !left.includes(k))),
    };
  };
  let pending = writes.map((w) => without(w, (f) => skip.has(gapKey(how.objectOf(w), f))));
  const results = new Map<string, WriteResult>();
  const sentLast = new Map<string, W>();
  for (let round = 0; round < MAX_ROUNDS && pending.length > 0; round++) {
    const sent = pending;
    for (const w of sent) sentLast.set(how.keyOf(w), w);
    const answers = await settleEach(sent.map(how.keyOf), () => how.send(sent));
    pending = [];
    const found: OmittedField[] = [];
    for (const w of sent) {
      const r = answers.get(how.keyOf(w))!;
      results.set(how.keyOf(w), r);
      if (r.ok || !(r.error instanceof CrmFieldMissingError)) continue;
      const object = r.error.object ?? how.objectOf(w);
      const missing = new Set(r.error.fields.map((f) => gapKey(object, f)));
      const again = without(w, (f) => missing.has(gapKey(object, f)));
      if (again === w) continue; // names no field this write sends: nothing to leave out
      found.push(...r.error.fields.map((field) => ({ object, field })));
      pending.push(again);
    }
    if (found.length > 0) await recordFieldGaps(deps.db, deps.crmName, unique(found));
  }
  // A due gap whose field went through in a write: the CRM has it now.
  const wentThrough = new Set(
    [...sentLast.values()].flatMap((w) =>
      results.get(how.keyOf(w))?.ok ? Object.keys(w.properties).map((f) => gapKey(how.objectOf(w), f)) : [],
    ),
  );
  const appeared = due.filter((g) => wentThrough.has(gapKey(g.object, g.field)));
  if (appeared.length > 0) await clearFieldGaps(deps.db, deps.crmName, appeared);
  return { results, omitted };
}

function unique(fields: OmittedField[]): OmittedField[] {
  return [...new Map(fields.map((f) => [gapKey(f.object, f.field), f])).values()];
}

export const CRM_FIELD_MISSING = 'CRM_FIELD_MISSING';

/** What a call written without `omitted` says about each field, and how to create it. */
export function fieldGapWarnings(mapping: Mapping, omitted: readonly OmittedField[]): string[] {
  return omitted.map(
    ({ object, field }) =>
      stampMissingWarning(mapping, field) ??
      `${CRM_FIELD_MISSING}: the CRM has no ${object}.${field}, so it was written without it; ${fieldFix(mapping.crm, object, field)}`,
  );
}

/**
 * Runs one batch write and maps its results by key. If the whole request fails, every key gets
 * that error (each call then retries or fails on its own).
 */
export async function settleEach(
  keys: string[],
  write: () => Promise<WriteResult[]>,
): Promise<Map<string, WriteResult>> {
  if (keys.length === 0) return new Map();
  try {
    return new Map((await write()).map((r) => [r.key, r]));
  } catch (error) {
    return new Map(keys.map((key) => [key, { key, ok: false as const, error: error as Error }]));
  }
}
