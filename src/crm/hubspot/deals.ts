import { CrmRejectedError, CrmValidationError } from '../errors.js';
import type { DealWrite, WriteResult } from '../types.js';
import { readObjects } from './batchReads.js';
import type { Runner } from './runner.js';
import type { WriteValue } from './values.js';
import { BATCH_SIZE } from './linkTypes.js';

/**
 * Deal signals: `POST /crm/objects/{version}/deals/batch/update`, 100 deals per request ("Update a batch
 * of deals by internal ID, or unique property values", HubSpot CRM API reference). A deal HubSpot
 * cannot update comes back in the 207's `errors`, named by its id in `context.ids`.
 */
export async function updateDeals(
  run: Runner,
  writes: DealWrite[],
  toProperties: (p: Record<string, WriteValue>) => Record<string, string>,
): Promise<WriteResult[]> {
  const latest = [...new Map(writes.map((w) => [w.dealId, w])).values()]; // the last write of a deal wins
  const results = new Map<string, WriteResult>();
  for (let i = 0; i < latest.length; i += BATCH_SIZE) {
    const chunk = latest.slice(i, i + BATCH_SIZE);
    let response;
    try {
      response = await run('update deals', (api) =>
        api.batchUpdate(
          'deals',
          chunk.map((w) => ({ id: w.dealId, properties: toProperties(w.properties) })),
        ),
      );
    } catch (err) {
      if ((err instanceof CrmRejectedError || err instanceof CrmValidationError) && chunk.length > 1) {
        // Refused as a whole (one deal's value, or a deal HubSpot will not name): each deal goes
        // alone, so one bad deal does not hold back the others. Rare, so the extra requests are.
        for (const w of chunk) {
          const [alone] = await updateDeals(run, [w], toProperties);
          results.set(w.dealId, alone!);
        }
        continue;
      }
      for (const w of chunk) results.set(w.dealId, { key: w.dealId, ok: false, error: err as Error });
      continue;
    }
    const updated = new Set(response.results.map((r) => r.id));
    for (const w of chunk) {
      if (updated.has(w.dealId)) {
        results.set(w.dealId, { key: w.dealId, ok: true, id: w.dealId, created: false });
        continue;
      }
      const error = response.errors.find((e) => e.context?.ids?.includes(w.dealId)) ?? response.errors[0];
      const message = `HubSpot did not update deal ${w.dealId}: ${error?.message ?? 'no result returned'}`;
      results.set(w.dealId, {
        key: w.dealId,
        ok: false,
        error: new CrmRejectedError(message, 'hubspot', 207),
      });
    }
  }
  return writes.map(
    (w) =>
      results.get(w.dealId) ?? { key: w.dealId, ok: false, error: new Error(`no result for ${w.dealId}`) },
  );
}

/** Deals' current values of `properties`, in batch reads of 100. */
export async function readDeals(
  run: Runner,
  dealIds: string[],
  properties: string[],
): Promise<Map<string, Record<string, unknown>>> {
  const found = await readObjects(run, 'deals', dealIds, properties);
  return new Map([...found].map(([id, o]) => [id, o.properties]));
}
