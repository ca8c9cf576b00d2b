/**
 * The promises every scenario checks at the end, read from what the sandboxes recorded and what
 * the worker reports: each call settled, one CRM activity per call with the Service's scores, at
 * most one follow-up generation per call, every generated draft attached once, no 429.
 */
import type { HubSpotSandbox } from '../../src/sandbox/hubspot/index.js';
import type { ServiceSandbox } from '../../src/sandbox/service/index.js';
import { ACTIVE_SYNC_STATES, type SyncState } from '../../src/sync/states.js';
import { syncState, type WorkerProcess } from '../../test/e2e/harness.js';
import {
  draftIds,
  expectedScores,
  followupGenerations,
  hubspotCallEngagements,
  hubspotNotes,
} from '../../test/e2e/readback.js';
import type { Verdict } from '../scenario.js';

/** Each call's sync state as the worker reports it (undefined: the worker never heard of it). */
export async function callStates(
  worker: WorkerProcess,
  callIds: string[],
): Promise<Map<string, SyncState | undefined>> {
  const states = new Map<string, SyncState | undefined>();
  for (const id of callIds) states.set(id, (await syncState(worker, id)) as SyncState | undefined);
  return states;
}

function settled(state: SyncState | undefined): boolean {
  return state !== undefined && !ACTIVE_SYNC_STATES.includes(state);
}

/**
 * Waits (at most `timeoutMs`, or until `signal`) for every call to reach a state the worker has no
 * more work for; returns the final states and how long it took.
 */
export async function waitQuiescent(
  worker: WorkerProcess,
  callIds: string[],
  options: { timeoutMs: number; signal: AbortSignal },
): Promise<{ states: Map<string, SyncState | undefined>; ms: number; quiet: boolean }> {
  const started = Date.now();
  const deadline = started + options.timeoutMs;
  let states = new Map<string, SyncState | undefined>();
  for (;;) {
    states = await callStates(worker, callIds).catch(() => states);
    const quiet = states.size === callIds.length && [...states.values()].every(settled);
    if (quiet || options.signal.aborted || Date.now() >= deadline) {
      return { states, ms: Date.now() - started, quiet };
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Counts of the states, e.g. `written_back 30`. */
export function stateSummary(states: Map<string, SyncState | undefined>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const s of states.values()) counts[s ?? 'unknown'] = (counts[s ?? 'unknown'] ?? 0) + 1;
  return counts;
}

/**
 * The end-of-run checks for calls that should all be written back (participants the HubSpot
 * sandbox knows). Adds figures and failures to `verdict`.
 */
export function checkWrittenOnce(
  verdict: Verdict,
  input: {
    svc: ServiceSandbox;
    hs: HubSpotSandbox;
    callIds: string[];
    states: Map<string, SyncState | undefined>;
  },
): void {
  const { svc, hs, callIds, states } = input;
  const notWritten = callIds.filter((id) => states.get(id) !== 'written_back');
  verdict.figure('written', `${callIds.length - notWritten.length}/${callIds.length}`);
  verdict.check(
    notWritten.length === 0,
    `${notWritten.length} call(s) not written back: ${notWritten
      .slice(0, 5)
      .map((id) => `${id}=${states.get(id) ?? 'unknown'}`)
      .join(', ')}`,
  );

  const activityProblems: string[] = [];
  const generationProblems: string[] = [];
  const draftProblems: string[] = [];
  let drafts = 0;
  // At most once means a kill between claiming the generation and the Service's answer leaves a
  // call without drafts (README); reported, not failed.
  let withoutDrafts = 0;
  for (const id of callIds) {
    const engagements = hubspotCallEngagements(hs, id);
    if (engagements.length !== 1) activityProblems.push(`${id}: ${engagements.length} activities`);
    else if (svc.state.getCall(id)?.analysis) {
      const { scoring, detected, handled } = expectedScores(svc, id);
      const p = engagements[0]!.properties;
      const wrong =
        p.crmsync_score_overall !== String(scoring.overall) ||
        p.crmsync_objections_detected !== String(detected) ||
        p.crmsync_objections_handled !== String(handled);
      if (wrong) activityProblems.push(`${id}: activity carries other scores than the Service's`);
    }
    const generations = followupGenerations(svc, id);
    if (generations > 1) generationProblems.push(`${id}: ${generations} generations`);
    const ids = draftIds(svc, id);
    drafts += ids.length;
    if (ids.length === 0) withoutDrafts++;
    const notes = hubspotNotes(hs, ids);
    const perDraft = ids.map((d) => notes.filter((n) => n.properties.crmsync_followup_id === d).length);
    if (perDraft.some((n) => n !== 1)) draftProblems.push(`${id}: notes per draft ${perDraft.join('/')}`);
  }
  verdict.figure('drafts', drafts);
  verdict.figure('calls without drafts', withoutDrafts);
  const first = (list: string[]) => list.slice(0, 5).join('; ');
  verdict.check(
    activityProblems.length === 0,
    `activities not exactly one and right: ${first(activityProblems)}`,
  );
  verdict.check(
    generationProblems.length === 0,
    `follow-ups generated more than once: ${first(generationProblems)}`,
  );
  verdict.check(draftProblems.length === 0, `drafts not attached exactly once: ${first(draftProblems)}`);
}

/** No 429 from the Service or HubSpot; adds the Service's busiest second and minute as figures. */
export function checkNo429(verdict: Verdict, svc: ServiceSandbox, hs: HubSpotSandbox): void {
  const counters = svc.state.countersSnapshot();
  const hubspot429 = Object.values(hs.state.limits.rejected).reduce((a, b) => a + b, 0);
  verdict.figure('429s', counters.rejected429 + hubspot429);
  verdict.figure('max/s,/min', `${counters.maxInAnySecond},${counters.maxInAnyMinute}`);
  verdict.check(counters.rejected429 === 0, `the Service answered ${counters.rejected429} 429(s)`);
  verdict.check(hubspot429 === 0, `HubSpot answered ${hubspot429} 429(s)`);
}
