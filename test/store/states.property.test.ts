/**
 * Every state has an exit (issue 22, defect 1): from any state, whatever each write-back try finds,
 * the call reaches an end state (written_back, failed, skipped) within a bounded number of tries.
 * Each outcome is what the pipeline does to the call's row for it, through the same store calls
 * (moveSyncStatus, endSync, recordSyncError), and housekeeping's real pass runs five minutes after
 * every try that leaves no job queued, on the embedded database.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analysisWaitMs, ANALYSIS_GIVE_UP_MS } from '../../src/pipelines/analysisWait.js';
import type { Db } from '../../src/store/database.js';
import { endSync, moveSyncStatus } from '../../src/store/syncMoves.js';
import { upsertDiscovered } from '../../src/store/syncStatus/discovered.js';
import { recordSyncError } from '../../src/store/syncStatus/errors.js';
import { getSyncStatus } from '../../src/store/syncStatus/queries.js';
import { transitionSyncStatus } from '../../src/store/syncStatus/transitions.js';
import { isEndState, SYNC_STATES, syncPath, type SyncState } from '../../src/sync/states.js';
import { MAX_REQUEUES, requeueStrandedCalls, STRANDED_AFTER_MS } from '../../src/worker/housekeeping.js';
import { useMigratedDatabase } from './helpers.js';

const OUTCOMES = [
  'written',
  'crashed_mid_write',
  'not_analysed',
  'nothing_to_write',
  'failed_for_good',
  'error_noted',
  'context_pushed',
] as const;
type Outcome = (typeof OUTCOMES)[number];

const T0 = Date.UTC(2026, 0, 5, 12);
/**
 * Waits for an analysis end by ANALYSIS_GIVE_UP_MS (about 75 of them from a fresh call); every
 * other try either moves the call forward (at most four times) or counts towards NO_PROGRESS.
 */
const BOUND = 100 + 5 * (MAX_REQUEUES + 1);

describe('from any state, through any outcomes, a call reaches an end', () => {
  const current = useMigratedDatabase('embedded');
  let calls = 0;

  it('within a bounded number of tries', async () => {
    const db = current().db.prisma;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...SYNC_STATES),
        fc.array(fc.constantFrom(...OUTCOMES), { minLength: 1, maxLength: 12 }),
        async (start, outcomes) => {
          const callId = `p${++calls}`;
          const tries = await drive(db, callId, start, outcomes);
          const row = await getSyncStatus(db, callId, 'hubspot');
          expect(isEndState(row!.state)).toBe(true);
          expect(tries).toBeLessThanOrEqual(BOUND);
        },
      ),
      { numRuns: 60, seed: 20261128 },
    );
  });
});

/** Runs tries (outcomes in turn, over again) until the call is at an end or past BOUND. */
async function drive(db: Db, callId: string, start: SyncState, outcomes: Outcome[]): Promise<number> {
  const crm = 'hubspot';
  let t = T0;
  const at = () => new Date(t);
  await upsertDiscovered(db, { callId, crm, now: at() });
  await moveSyncStatus(db, { callId, crm, from: 'discovered', to: start, now: at(), detail: 'start' });
  // The Service's contract: an analysis once ready stays ready.
  let analysed = syncPath('discovered', start)!.includes('writing_back');
  let tries = 0;
  for (;;) {
    const row = (await getSyncStatus(db, callId, crm))!;
    if (isEndState(row.state) || tries > BOUND) return tries;
    const outcome = outcomes[tries % outcomes.length]!;
    tries++;
    const from = row.state;
    const move = (to: SyncState) => moveSyncStatus(db, { callId, crm, from, to, now: at(), detail: outcome });
    const noted = () =>
      recordSyncError(db, { callId, crm, code: 'X', message: outcome, nextAttemptAt: null, now: at() });
    const end = (to: 'skipped' | 'failed', code: string) =>
      endSync(db, { callId, crm, from, to, code, message: outcome, now: at() });
    if (outcome === 'not_analysed' && !analysed) {
      // The job waits for the analysis (still queued: housekeeping leaves it alone), and gives up.
      const age = t - T0;
      if (age > ANALYSIS_GIVE_UP_MS) await end('failed', 'SERVICE_NOT_READY');
      else await move('awaiting_analysis');
      t += analysisWaitMs(age);
      continue;
    }
    if (outcome === 'written' || outcome === 'crashed_mid_write') {
      analysed = true;
      await move('writing_back');
      if (outcome === 'written')
        await transitionSyncStatus(db, { callId, crm, to: 'written_back', now: at() });
    } else if (outcome === 'nothing_to_write') await end('skipped', 'SKIPPED');
    else if (outcome === 'failed_for_good') await end('failed', 'CRM_REJECTED');
    else if (outcome === 'context_pushed' && from === 'discovered') await move('context_pushed');
    else await noted();
    // The try's job is done; housekeeping's next pass finds the call if it is still working.
    await db.job.updateMany({ where: { key: `writeback:${callId}` }, data: { state: 'done' } });
    t += STRANDED_AFTER_MS + 1;
    await requeueStrandedCalls(db, { crm, nowMs: t });
  }
}
