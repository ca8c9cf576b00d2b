/**
 * `crm-sync backfill --since DATE --plan`: counts the calls in range with the Service's list
 * endpoint (its pages are paid from the shared budget at backfill priority, like any request),
 * estimates the Service requests their sync needs, and says when the backfill would finish at
 * the plan's rate and daily cap less the live reserve. Writes nothing but the budget's own ledger.
 */
import {
  backfillShare,
  DEFAULT_REQUESTS_PER_CALL_PARTS,
  projectFinish,
  requestsPerCall,
  type BackfillShare,
  type RequestsPerCall,
} from '../budget/forecast.js';
import type { PlanLimits } from '../budget/plans.js';
import type { SlotLedger } from '../budget/types.js';
import type { CrmName } from '../crm/types.js';
import type { ListCallsParams, ServiceClient } from '../service/types.js';
import type { Db } from '../store/database.js';
import { requestHistory } from '../store/forecastQueries.js';
import { STILL_TO_SYNC } from '../worker/discover.js';
import type { Clock } from '../util/clock.js';

/** Calls per list page, as the backfill walk asks (the Service's maximum). */
export const LIST_PAGE_SIZE = 100;

/** The list filter of a backfill from `sinceMs` to `untilMs`: created_after is exclusive. */
export function backfillRange(
  sinceMs: number,
  untilMs: number,
): Pick<ListCallsParams, 'createdAfter' | 'createdBefore'> {
  return {
    createdAfter: new Date(sinceMs - 1).toISOString(),
    createdBefore: new Date(untilMs).toISOString(),
  };
}

export interface BackfillPlan {
  since: string;
  until: string;
  /** Calls the range holds at the Service. */
  listed: number;
  /** Of those, the calls a backfill would queue: not yet synced (no row, or still in progress). */
  calls: number;
  /** List requests the count took. */
  listRequests: number;
  perCall: RequestsPerCall;
  requests: number;
  share: BackfillShare;
  limits: PlanLimits;
  /** Requests of the current UTC day already used (the count's included) when planned. */
  usedToday: number;
  plannedAt: string;
  finishesAt: string;
}

export async function planBackfill(
  deps: {
    db: Db;
    crm: CrmName;
    service: ServiceClient;
    clock: Clock;
    ledger: SlotLedger;
    limits: PlanLimits;
    reserves: { liveWindowReserve: number; liveDailyReserve: number };
  },
  range: { sinceMs: number; untilMs: number },
): Promise<BackfillPlan> {
  let listed = 0;
  let calls = 0;
  let listRequests = 0;
  for await (const page of deps.service.listCalls(
    { ...backfillRange(range.sinceMs, range.untilMs), limit: LIST_PAGE_SIZE },
    { priority: 'backfill' },
  )) {
    listRequests++;
    listed += page.calls.length;
    const done = await deps.db.syncStatus.count({
      where: {
        crm: deps.crm,
        callId: { in: page.calls.map((c) => c.id) },
        state: { notIn: [...STILL_TO_SYNC] },
      },
    });
    calls += page.calls.length - done;
  }
  const nowMs = deps.clock.now();
  const [ledger, history] = await Promise.all([
    deps.ledger.snapshot(nowMs),
    requestHistory(deps.db, { crm: deps.crm, nowMs }),
  ]);
  const perCall = requestsPerCall(history);
  const requests = Math.ceil(calls * perCall.value);
  const share = backfillShare(deps.limits, deps.reserves);
  const finishesAt = projectFinish({ requests, nowMs, usedToday: ledger.usedToday, share });
  return {
    since: new Date(range.sinceMs).toISOString(),
    until: new Date(range.untilMs).toISOString(),
    listed,
    calls,
    listRequests,
    perCall,
    requests,
    share,
    limits: deps.limits,
    usedToday: ledger.usedToday,
    plannedAt: new Date(nowMs).toISOString(),
    finishesAt: finishesAt.toISOString(),
  };
}

export function formatBackfillPlan(plan: BackfillPlan): string {
  const parts = DEFAULT_REQUESTS_PER_CALL_PARTS;
  const perCall =
    plan.perCall.source === 'measured'
      ? `measured: ${plan.perCall.requests} requests over ${plan.perCall.calls} calls synced in the last 7 days`
      : `default: list share ${parts.listShare} + analysis ${parts.analysis} + follow-ups ${parts.followups}`;
  const cap = plan.limits.dailyCap;
  const perDay =
    plan.share.perDay === null ? 'no daily cap' : `${plan.share.perDay} of the daily cap of ${cap}`;
  const synced = plan.listed - plan.calls;
  return [
    `Backfill plan (nothing queued): ${plan.calls} calls to sync of ${plan.listed} calls created ${plan.since} .. ${plan.until}` +
      `${synced > 0 ? ` (${synced} already synced)` : ''}, counted with ${plan.listRequests} list request(s).`,
    `Service requests needed: about ${plan.requests} (${plan.perCall.value.toFixed(2)} per call, ${perCall}).`,
    `Backfill share: ${round(plan.share.perMinute)} requests/minute and ${perDay} (the live reserve is left untouched); ${plan.usedToday} used today.`,
    `Finishes at ${plan.finishesAt} (${inWords(Date.parse(plan.finishesAt) - Date.parse(plan.plannedAt))}), if nothing else spends the budget.`,
  ].join('\n');
}

/** How long from now, at a useful precision: minutes under an hour, days past two. */
export function inWords(ms: number): string {
  if (ms <= 0) return 'now';
  const minutes = Math.ceil(ms / 60_000);
  if (minutes < 60) return `in about ${minutes} min`;
  const hours = ms / 3_600_000;
  if (hours < 48) return `in about ${hours.toFixed(1)} h`;
  return `in about ${(hours / 24).toFixed(1)} days`;
}

function round(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}
