/**
 * call.completed / analysis.ready / followup.generated / poll / backfill: once the call is
 * analysed, write its activity (scores, objections, summary, drafts) to the CRM, exactly once per
 * call and CRM (the adapters upsert on the call id). Jobs come in batches so the CRM writes use
 * its batch APIs; the Service reads happen per call, each paid from the budget. One call's
 * trouble never fails its batch-mates: every step records its error on that call alone.
 *
 * Four steps (src/pipelines/writeback/):
 * 1. gather: the batch's rows, stored drafts and CRM ledger, then per call what its decision asks for;
 * 2. decide (pure): nothing, an end, a wait for the analysis, adoption, or a write, and why;
 * 3. record: the calls that need no CRM write move (or not) and get their result;
 * 4. act: adoptions (crmLedger.ts), then the CRM and Service requests of the writes, each call's
 *    row recorded after its writes (record.ts).
 */
import { adoptAll, type Adoption } from './crmLedger.js';
import type { PipelineDeps } from './deps.js';
import type { PreparedWrite, WritebackItem, WritebackResult } from './types.js';
import { writeToCrm } from './writeback/act.js';
import { gatherCall, readBatch, type Gathered } from './writeback/gather.js';
import { recordDecision } from './writeback/record.js';

/** Runs a batch of write-back jobs; one result per job id. */
export async function runWritebackBatch(
  deps: PipelineDeps,
  items: WritebackItem[],
): Promise<Map<number, WritebackResult>> {
  const results = new Map<number, WritebackResult>();
  const read = await readBatch(deps, items);
  // Each call gathered, decided and, when no CRM write follows, recorded on its own.
  const gathered = await Promise.all(
    items.map(async (item): Promise<Gathered | undefined> => {
      try {
        const g = await gatherCall(deps, item, read);
        const result = await recordDecision(deps, g);
        if (!result) return g;
        results.set(item.jobId, result);
      } catch (error) {
        results.set(item.jobId, { kind: 'error', error });
      }
      return undefined;
    }),
  );
  const writes: PreparedWrite[] = [];
  const adoptions: Adoption[] = [];
  for (const g of gathered) {
    if (!g) continue;
    const { item, facts, decision } = g;
    const record = facts.record as Exclude<typeof facts.record, Error | undefined>;
    if (decision.kind === 'adopt') {
      adoptions.push({
        jobId: item.jobId,
        record,
        call: facts.call!,
        written: decision.written,
        run: item.run,
      });
    } else if (decision.kind === 'write') {
      writes.push({
        item,
        callId: item.payload.callId,
        call: facts.call!,
        analysis: facts.analysis as PreparedWrite['analysis'],
        lookup: facts.lookup!,
        drafts: decision.drafts,
        generate: decision.generate,
        followupsOnly: decision.followupsOnly,
        warnings: [],
      });
    }
  }
  for (const [jobId, adopted] of await adoptAll(deps, adoptions)) {
    results.set(
      jobId,
      adopted instanceof Error ? { kind: 'error', error: adopted } : { kind: 'done', detail: adopted },
    );
  }
  if (writes.length > 0) await writeToCrm(deps, writes, results);
  return results;
}
