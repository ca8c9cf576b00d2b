/**
 * The CRM as the ledger of last resort, priced: worker A backfills `calls` analysed calls into the
 * HubSpot sandbox; worker B, on a fresh database against the same sandboxes, finds them in its
 * first-run look-back. B's searches of calls and notes are the check (one `findWritten` per
 * write-back batch); for the calls A wrote, B must ask the Service for no follow-ups and write no
 * note or call engagement. Calls A did not finish (skipped, failed) B handles as usual.
 */
import type { Logger } from '../../src/log/logger.js';
import {
  addAnalysedCalls,
  settledCalls,
  startBenchWorker,
  startSandboxes,
  waitForStatus,
  PLANS,
} from './harness.js';

export interface LedgerResult {
  calls: number;
  /** Calls worker A wrote (an engagement in HubSpot when B started). */
  writtenByA: number;
  /** Worker A's calls by sync state when it stopped. */
  statesA: Record<string, number>;
  writtenByB: number;
  /** B's searches of call engagements and notes: the check. */
  checkRequests: number;
  checkRequestsPerCall: number;
  /** All HubSpot requests B made (the check, plus lookups and writes for calls A had not written). */
  crmRequests: number;
  crmByPath: Record<string, number>;
  /** For the calls A wrote, what B added: follow-up generations, notes, call engagements. */
  extraGenerations: number;
  extraNotes: number;
  extraActivities: number;
  secondsB: number;
}

const CHECK_PATHS = ['POST /crm/objects/2026-09/calls/search', 'POST /crm/objects/2026-09/notes/search'];

export async function benchLedgerCheck(
  calls: number,
  options: { logger: Logger; timeoutMs: number },
): Promise<LedgerResult> {
  const plan = PLANS.none;
  const sb = await startSandboxes(plan);
  const { svc, hs } = sb;
  const settled = (s: Parameters<typeof settledCalls>[0]) => {
    const c = settledCalls(s);
    return c.written + c.skipped + c.failed >= calls;
  };
  const engagements = (callId: string) =>
    [...hs.state.store.objects.calls.values()].filter((o) => o.properties.crmsync_call_id === callId);
  const notes = (callId: string) =>
    [...hs.state.store.objects.notes.values()].filter((o) => o.properties.crmsync_call_id === callId);
  try {
    const ids = addAnalysedCalls(svc, calls);
    const a = await startBenchWorker(sb, plan, { logger: options.logger });
    let statesA: Record<string, number>;
    try {
      const { status } = await waitForStatus(a.worker, settled, { timeoutMs: options.timeoutMs });
      statesA = status.calls as Record<string, number>;
    } finally {
      await a.stop();
    }

    const byA = ids.filter((id) => engagements(id).length > 0);
    const before = new Map(
      byA.map((id) => [id, { drafts: svc.state.followups(id).length, notes: notes(id).length }]),
    );
    hs.state.requests.clear();
    const b = await startBenchWorker(sb, plan, { logger: options.logger });
    try {
      const { status, doneAt } = await waitForStatus(b.worker, settled, { timeoutMs: options.timeoutMs });
      const crmByPath = hs.state.requests.byPath();
      const checkRequests = CHECK_PATHS.reduce((n, p) => n + (crmByPath[p] ?? 0), 0);
      const sum = (f: (id: string) => number) => byA.reduce((n, id) => n + f(id), 0);
      return {
        calls,
        writtenByA: byA.length,
        statesA,
        writtenByB: settledCalls(status).written,
        checkRequests,
        checkRequestsPerCall: checkRequests / Math.max(1, calls),
        crmRequests: hs.state.requests.records.length,
        crmByPath,
        extraGenerations: sum((id) => (svc.state.followups(id).length > before.get(id)!.drafts ? 1 : 0)),
        extraNotes: sum((id) => notes(id).length - before.get(id)!.notes),
        extraActivities: sum((id) => engagements(id).length - 1),
        secondsB: ((doneAt ?? Date.now()) - b.startedAt) / 1000,
      };
    } finally {
      await b.stop();
    }
  } finally {
    await sb.close();
  }
}
