/**
 * Deal-level coaching signals (pure): what one deal's synced calls add up to. Calls are ordered by
 * their start time (the Service's `created_at`), ties by call id, so the order never depends on
 * when a call was delivered; the newest call is the one every "last" value comes from.
 */
import type { Analysis, Call } from '../service/types.js';

/** What the deal keeps of one synced call. */
export interface DealCallFacts {
  callId: string;
  /** Epoch ms of the call's start. */
  startedAt: number;
  overallScore: number | null;
  objectionsDetected: number | null;
  objectionsHandled: number | null;
  nextSteps: string[];
}

/** The values a deal's mapped fields are computed from (`signals` in the mapping's `deal` section). */
export interface DealSignals {
  call_count: number;
  last_call_id: string | null;
  /** ISO time of the newest call's start. */
  last_call_at: string | null;
  last_score: number | null;
  /** Mean overall score of the newest `average_of` calls that have one. */
  average_score: number | null;
  /** How many scored calls the average covers (at most `average_of`). */
  average_count: number;
  /** Objections detected minus handled, summed over the deal's calls (never below 0). */
  open_objections: number;
  /** The next steps of the newest call that named any, joined with "; ". */
  last_next_step: string | null;
}

/** One call as the mapping's `calls` list shows it (newest first). */
export interface DealCallView {
  call_id: string;
  started_at: string;
  overall_score: number | null;
  objections_detected: number | null;
  objections_handled: number | null;
  next_steps: string[];
}

/**
 * The facts of one call, from the call and its analysis (the analysis wins where both say), the
 * same sources the shipped activity mapping reads. Null when the start time cannot be read: such a
 * call cannot be ordered among the deal's calls, so it is left out.
 */
export function dealCallFacts(call: Call, analysis: Analysis | null): DealCallFacts | null {
  const startedAt = Date.parse(call.created_at);
  if (Number.isNaN(startedAt)) return null;
  const objections = analysis?.objections ?? null;
  return {
    callId: call.id,
    startedAt,
    overallScore: finite(analysis?.scoring?.overall) ?? finite(call.scoring?.overall),
    objectionsDetected: count(call.objections_detected) ?? (objections ? objections.length : null),
    objectionsHandled:
      count(call.objections_handled) ??
      (objections ? objections.filter((o) => o.handled === true).length : null),
    nextSteps: (analysis?.next_steps ?? []).map((s) => s.trim()).filter((s) => s !== ''),
  };
}

/** Whether `a` started after `b` (ties broken by call id, so every process agrees). */
export function isNewer(
  a: Pick<DealCallFacts, 'callId' | 'startedAt'>,
  b: Pick<DealCallFacts, 'callId' | 'startedAt'>,
): boolean {
  return a.startedAt !== b.startedAt ? a.startedAt > b.startedAt : a.callId > b.callId;
}

/** Newest first; one entry per call id (a later copy of the same call replaces the earlier). */
export function newestFirst(calls: readonly DealCallFacts[]): DealCallFacts[] {
  const byId = new Map(calls.map((c) => [c.callId, c]));
  return [...byId.values()].sort((a, b) => (isNewer(a, b) ? -1 : isNewer(b, a) ? 1 : 0));
}

export function aggregateDeal(calls: readonly DealCallFacts[], averageOf: number): DealSignals {
  const ordered = newestFirst(calls);
  const last = ordered[0];
  const scored = ordered
    .flatMap((c) => (c.overallScore === null ? [] : [c.overallScore]))
    .slice(0, averageOf);
  const detected = sum(ordered.map((c) => c.objectionsDetected ?? 0));
  const handled = sum(ordered.map((c) => c.objectionsHandled ?? 0));
  const withSteps = ordered.find((c) => c.nextSteps.length > 0);
  return {
    call_count: ordered.length,
    last_call_id: last?.callId ?? null,
    last_call_at: last ? new Date(last.startedAt).toISOString() : null,
    last_score: last?.overallScore ?? null,
    average_score: scored.length > 0 ? sum(scored) / scored.length : null,
    average_count: scored.length,
    open_objections: Math.max(0, detected - handled),
    last_next_step: withSteps ? withSteps.nextSteps.join('; ') : null,
  };
}

export function callViews(calls: readonly DealCallFacts[]): DealCallView[] {
  return newestFirst(calls).map((c) => ({
    call_id: c.callId,
    started_at: new Date(c.startedAt).toISOString(),
    overall_score: c.overallScore,
    objections_detected: c.objectionsDetected,
    objections_handled: c.objectionsHandled,
    next_steps: c.nextSteps,
  }));
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

function finite(value: number | null | undefined): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function count(value: number | null | undefined): number | null {
  const n = finite(value);
  return n === null ? null : Math.max(0, Math.trunc(n));
}
