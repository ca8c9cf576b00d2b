import type { SaveResult } from 'jsforce';
import { CrmRejectedError } from '../errors.js';
import type { DealWrite, WriteResult } from '../types.js';
import type { SalesforceContext } from './context.js';
import { fitToFields } from './describe.js';
import { recordFailure, type RecordError } from './errors.js';
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
