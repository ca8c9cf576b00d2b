import type { Record as SfRecord } from 'jsforce';
import { draftIdOfKey } from '../draftKey.js';
import type { WrittenCall, WrittenQuery } from '../types.js';
import { queryRecords, type SalesforceContext } from './context.js';
import { packTerms } from './soqlBatch.js';
import { soqlField, soqlString } from './soql.js';
import type { KeyFields } from './writes.js';

/** Rows read per query, across its pages: enough for every draft of 200 calls. */
const MAX_ROWS = 50_000;

/**
 * `findWritten` on Salesforce: one SOQL on Task by the call's external id with `IN` (up to 200
 * ids per query, within the URL length packTerms allows), then, for the calls found, one SOQL on
 * the draft object by the call id each draft carries. A draft EmailMessage is related to the deal
 * or account only (RelatedToId, Object Reference "EmailMessage"), and Task cannot be the target of
 * a custom lookup, so the draft's own call-id field is what ties it to the call.
 */
export async function findWrittenCalls(
  ctx: SalesforceContext,
  callIds: string[],
  query: WrittenQuery,
  keys: KeyFields,
): Promise<Map<string, WrittenCall>> {
  const out = new Map<string, WrittenCall>();
  const activityField = soqlField(query.activityIdField ?? keys.activity);
  const stamp = await existingField(ctx, 'Task', query.generatedAtField);
  const select = ['Id', activityField, ...(stamp ? [stamp] : [])];
  const tasks = await rowsWhereIn(ctx, 'Task', activityField, select, callIds);
  for (const [callId, rows] of tasks) {
    const generatedAt = stamp ? valueOf(rows[0]!, stamp) : undefined;
    out.set(callId, {
      activityId: rows[0]!.Id!,
      followups: [],
      ...(generatedAt ? { followupsGeneratedAt: generatedAt } : {}),
    });
  }

  // A draft is written only after its call's activity, so only calls with one can have drafts.
  const drafts = query.followups;
  if (!drafts || out.size === 0) return out;
  const object = drafts.kind === 'task' ? 'Task' : 'EmailMessage';
  const idField = soqlField(drafts.idField ?? keys.followup);
  const callField = soqlField(drafts.callIdField);
  const found = await rowsWhereIn(ctx, object, callField, ['Id', idField, callField], [...out.keys()]);
  for (const [callId, rows] of found) {
    for (const row of rows) {
      const key = valueOf(row, idField);
      if (key) out.get(callId)!.followups.push({ draftId: draftIdOfKey(key, callId), crmId: row.Id! });
    }
  }
  return out;
}

/** Rows of `object` whose `field` is one of `values`, grouped by the value asked (SOQL compares text case-insensitively). */
async function rowsWhereIn(
  ctx: SalesforceContext,
  object: string,
  field: string,
  select: string[],
  values: string[],
): Promise<Map<string, SfRecord[]>> {
  const byLower = new Map<string, string>();
  for (const v of values) if (v !== '') byLower.set(v.toLowerCase(), v);
  const out = new Map<string, SfRecord[]>();
  const soql = (terms: string) => `SELECT ${select.join(', ')} FROM ${object} WHERE ${field} IN (${terms})`;
  const terms = [...byLower.values()].map((v) => ({ key: v, term: soqlString(v) }));
  for (const chunk of packTerms(terms, { soql, joiner: ', ' })) {
    const rows = await queryRecords(
      ctx,
      `written ${object}`,
      soql(chunk.map((t) => t.term).join(', ')),
      MAX_ROWS,
    );
    for (const row of rows) {
      const asked = byLower.get((valueOf(row, field) ?? '').toLowerCase());
      if (asked !== undefined) out.set(asked, [...(out.get(asked) ?? []), row]);
    }
  }
  return out;
}

/**
 * `field` when the object has it, else undefined: SOQL refuses a field the org lacks (INVALID_FIELD),
 * and the follow-up stamp may not be created yet after an upgrade. The describe is cached.
 */
async function existingField(
  ctx: SalesforceContext,
  object: string,
  field: string | undefined,
): Promise<string | undefined> {
  if (!field) return undefined;
  const info = await ctx.describe.get(object);
  return info.fields.has(field.toLowerCase()) ? soqlField(field) : undefined;
}

/** A field of a row, whatever the case Salesforce spelled it in. */
function valueOf(row: SfRecord, field: string): string | undefined {
  const lower = field.toLowerCase();
  const entry = Object.entries(row).find(([k]) => k.toLowerCase() === lower);
  return typeof entry?.[1] === 'string' ? entry[1] : undefined;
}
