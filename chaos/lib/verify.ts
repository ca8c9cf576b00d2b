/**
 * The promises every scenario checks at the end, read from what the sandboxes recorded and what
 * the worker reports: each call settled, one CRM activity per call with the Service's scores, at
 * most one follow-up generation per call, every generated draft attached once, no 429.
 */
import type { HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import type { ServiceSandbox } from '@crm-sync/sandboxes/service';
import { ACTIVE_SYNC_STATES, type SyncState } from '../../src/sync/states.js';
import { syncState, type WorkerProcess } from '../../test/e2e/harness.js';
import { checkWrittenOnceIn, hubspotReadback } from './crmReadback.js';
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
 * more work for and its job queue to be empty (a written call may still have drafts to attach
 * that followup.generated brought); returns the final states and how long it took.
 */
export async function waitQuiescent(
  worker: WorkerProcess,
  callIds: string[],
  options: { timeoutMs: number; signal: AbortSignal },
): Promise<{
  states: Map<string, SyncState | undefined>;
  ms: number;
  quiet: boolean;
  /** The worker's jobs by state at the end (what keeps it from quiescence, when not quiet). */
  jobs: Record<string, number>;
}> {
  const started = Date.now();
  const deadline = started + options.timeoutMs;
  let states = new Map<string, SyncState | undefined>();
  for (;;) {
    states = await callStates(worker, callIds).catch(() => states);
    const jobs = await jobStates(worker);
    const quiet = states.size === callIds.length && [...states.values()].every(settled) && queueEmpty(jobs);
    if (quiet || options.signal.aborted || Date.now() >= deadline) {
      return { states, ms: Date.now() - started, quiet, jobs: jobs ?? {} };
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function jobStates(worker: WorkerProcess): Promise<Record<string, number> | null> {
  try {
    return (await worker.status()).jobs.byState;
  } catch {
    return null;
  }
}

/** No job queued or running: a written call may still have drafts to attach (followup.generated). */
function queueEmpty(jobs: Record<string, number> | null): boolean {
  return jobs !== null && (jobs.queued ?? 0) + (jobs.running ?? 0) === 0;
}

/** Why waitQuiescent's wait ended unquiet: the calls' states and the worker's jobs, counted. */
export function unquiet(states: Map<string, SyncState | undefined>, jobs: Record<string, number>): string {
  return `calls ${JSON.stringify(stateSummary(states))}, jobs ${JSON.stringify(jobs)}`;
}

/** Counts of the states, e.g. `written_back 30`. */
export function stateSummary(states: Map<string, SyncState | undefined>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const s of states.values()) counts[s ?? 'unknown'] = (counts[s ?? 'unknown'] ?? 0) + 1;
  return counts;
}

/**
 * The end-of-run checks for calls that should all be written back (participants the HubSpot
 * sandbox knows), as checkWrittenOnceIn does them for any CRM. Adds figures and failures to `verdict`.
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
  const { hs, ...rest } = input;
  checkWrittenOnceIn(verdict, { ...rest, crm: hubspotReadback(hs) });
}

/**
 * The end of a HubSpot scenario: waits for quiescence (reported as 'calls' and 'settled in'), then
 * the written-once and no-429 checks.
 */
export async function checkSettledOnHubSpot(
  verdict: Verdict,
  input: { worker: WorkerProcess; svc: ServiceSandbox; hs: HubSpotSandbox; callIds: string[] },
  options: { timeoutMs: number; signal: AbortSignal },
): Promise<void> {
  const { svc, hs, callIds } = input;
  const { states, ms, quiet, jobs } = await waitQuiescent(input.worker, callIds, options);
  verdict.figure('calls', callIds.length);
  verdict.figure('settled in', `${(ms / 1000).toFixed(0)} s`);
  verdict.check(quiet, `not quiescent: ${unquiet(states, jobs)}`);
  checkWrittenOnce(verdict, { svc, hs, callIds, states });
  checkNo429(verdict, svc, hs);
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
