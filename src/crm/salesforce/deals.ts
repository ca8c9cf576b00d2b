import type { SaveResult } from 'jsforce';
import { CrmRejectedError } from '../errors.js';
import type { DealWrite, WriteResult } from '../types.js';
import { queryRecords, type SalesforceContext } from './context.js';
import { fitToFields } from './describe.js';
import { recordFailure, type RecordError } from './errors.js';
import { soqlField, soqlString } from './soql.js';
import { packTerms } from './soqlBatch.js';
import { MAX_RECORDS_PER_REQUEST } from './writes.js';

type RawResult = SaveResult & { errors?: RecordError[] };

/**
 * Deal signals on Opportunities, by record id: jsforce sends an array update as one
 * `PATCH composite/sobjects` of up to 200 records ("sObject Collections", REST API Developer
 * Guide), which answers per record; `allOrNone: false`, so one refused opportunity (deleted, a
 * validation rule) leaves the others written.
 */
export async function updateDeals(ctx: SalesforceContext, writes: DealWrite[]): Promise<WriteResult[]> {
  if (writes.length === 0) return [];
  const latest = [...new Map(writes.map((w) => [w.dealId, w])).values()]; // the last write of a deal wins
  const info = await ctx.describe.get('Opportunity');
  const results = new Map<string, WriteResult>();
  for (let i = 0; i < latest.length; i += MAX_RECORDS_PER_REQUEST) {
    const chunk = latest.slice(i, i + MAX_RECORDS_PER_REQUEST);
    const records = chunk.map((w) => ({ ...fitToFields(info, w.properties).values, Id: w.dealId }));
    let saved: (RawResult | CrmRejectedError)[];
    try {
      saved = (await ctx.call('update Opportunity', () =>
        ctx.conn.sobject('Opportunity').update(records, { allOrNone: false }),
      )) as RawResult[];
    } catch (err) {
      if (!(err instanceof CrmRejectedError)) throw err;
      saved = chunk.map(() => err);
    }
    chunk.forEach((w, j) => {
      const res = saved[j];
      const key = w.dealId;
      if (res instanceof CrmRejectedError) results.set(key, { key, ok: false, error: res });
      else if (res?.success) results.set(key, { key, ok: true, id: key, created: false });
      else results.set(key, { key, ok: false, error: recordFailure(res?.errors ?? [], key) });
    });
  }
  return writes.map((w) => results.get(w.dealId)!);
}

/** Opportunities' current values of `fields`: `SELECT ... WHERE Id IN (...)`, packed like every batched SOQL. */
export async function readDeals(
  ctx: SalesforceContext,
  dealIds: string[],
  fields: string[],
): Promise<Map<string, Record<string, unknown>>> {
  const select = ['Id', ...fields.map(soqlField)].join(', ');
  const soql = (terms: string) => `SELECT ${select} FROM Opportunity WHERE Id IN (${terms})`;
  const terms = [...new Set(dealIds)].map((id) => ({ key: id, term: soqlString(id) }));
  const out = new Map<string, Record<string, unknown>>();
  for (const chunk of packTerms(terms, { soql, joiner: ', ' })) {
    const rows = await queryRecords(ctx, 'read Opportunity', soql(chunk.map((t) => t.term).join(', ')));
    for (const row of rows) {
      // Salesforce answers with its own spelling of each field name; hand back the asked one.
      const byLower = new Map(Object.entries(row).map(([k, v]) => [k.toLowerCase(), v as unknown]));
      const asked =
        chunk.find((t) => t.key.slice(0, 15) === String(row.Id).slice(0, 15))?.key ?? String(row.Id);
      out.set(asked, Object.fromEntries(fields.map((f) => [f, byLower.get(f.toLowerCase()) ?? null])));
    }
  }
  return out;
}
