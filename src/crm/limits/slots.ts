/**
 * CRM request-budget arithmetic, free of I/O and clocks: given the recent request slots of every
 * process sharing one CRM account, may one more start now, and if not, how long until it may. Why a
 * slot is held until a window after its response, and the daily allowance: docs/budget.md.
 */

/** Which limit a slot counts against: HubSpot's ten-second window, its search second, or none but the day's. */
export type Lane = 'general' | 'search' | 'call';

export interface HeldSlot {
  lane: Lane;
  startedAt: number;
  /** When its response came; null while in flight. */
  doneAt: number | null;
}

/** What the CRM last reported of its daily allowance, and the start of the request it came with. */
export interface DailyReport {
  limit: number;
  remaining: number;
  fromMs: number;
}

export interface LedgerState {
  nowMs: number;
  /** The slots started in the last KEEP_MS, and every later one, of all lanes. */
  slots: readonly HeldSlot[];
  /** A pause of every lane (a 429, or the daily allowance spent). */
  pausedUntil: number | null;
  pauseReason: 'rate' | 'daily' | null;
  /** A pause of searches only (HubSpot's search-limit 429). */
  searchPausedUntil: number | null;
  report: DailyReport | null;
  /** A daily pause set this (and dropped the report): one request at a time until a new report. */
  probeSince: number | null;
}

export interface SlotAsk {
  lane: Lane;
  /** Slots of the lane's window this request may take (less any reserve); Infinity for no window. */
  limit: number;
  windowMs: number;
  /** Requests of the daily allowance left to others: requests stop at this many remaining. */
  dailyReserve: number;
  /**
   * How a spent allowance holds requests: until the next UTC midnight (HubSpot's daily limit), or
   * for `ms` after which one request reads the new usage (Salesforce's rolling 24 hours).
   */
  dailyHold: { kind: 'midnight' } | { kind: 'pause'; ms: number };
}

export type SlotDecision =
  | { grant: true }
  | { grant: false; waitMs: number; daily: false }
  /** The allowance is spent: the ledger records the pause (until `untilMs`) for every process. */
  | { grant: false; waitMs: number; daily: true; untilMs: number; newPause: boolean };

/** An unanswered request older than this belongs to a process that died mid-request. */
export const MAX_FLIGHT_MS = 5 * 60_000;
/** Slots older than this no window can hold (HubSpot's longest window is ten seconds). */
export const KEEP_MS = 60_000;
/** A daily report older than this is not trusted (an idle spell): one request at a time until a new one. */
export const REPORT_TTL_MS = 5 * 60_000;
/** While probing for a new report, how often to look again. */
const PROBE_RETRY_MS = 100;
const DAY_MS = 86_400_000;

/** Slots answered before this no window or valid report can count any more. */
export function keepFromMs(nowMs: number, report: DailyReport | null): number {
  const from = report ? Math.max(report.fromMs, nowMs - REPORT_TTL_MS) : Infinity;
  return Math.min(nowMs - KEEP_MS, from);
}

/** When the slot stops being held by a window of `windowMs`; Infinity while it may still answer. */
export function freesAt(slot: HeldSlot, windowMs: number, nowMs: number): number {
  const done =
    slot.doneAt ?? (slot.startedAt + MAX_FLIGHT_MS <= nowMs ? slot.startedAt + MAX_FLIGHT_MS : null);
  return done === null ? Infinity : done + windowMs;
}

/** Ms until the lane's window has room for one more of `limit`; 0 when it has now. */
export function windowWaitMs(
  slots: readonly HeldSlot[],
  ask: Pick<SlotAsk, 'lane' | 'limit' | 'windowMs'>,
  nowMs: number,
): number {
  if (!Number.isFinite(ask.limit)) return 0;
  const held = slots
    .filter((s) => s.lane === ask.lane && s.startedAt <= nowMs)
    .map((s) => freesAt(s, ask.windowMs, nowMs))
    .filter((at) => at > nowMs)
    .sort((a, b) => a - b);
  const excess = held.length - Math.max(1, ask.limit) + 1;
  if (excess <= 0) return 0;
  // A slot still in flight frees a window after its response, at the earliest a window from now.
  const at = held[excess - 1]!;
  return (at === Infinity ? nowMs + ask.windowMs : at) - nowMs;
}

/** Whether the report still speaks for the allowance now. */
function reportValid(report: DailyReport, ask: SlotAsk, nowMs: number): boolean {
  if (nowMs - report.fromMs > REPORT_TTL_MS) return false;
  // HubSpot's allowance starts again at midnight (UTC assumed, as src/crm/hubspot/errorMap.ts).
  return (
    ask.dailyHold.kind !== 'midnight' || Math.floor(report.fromMs / DAY_MS) === Math.floor(nowMs / DAY_MS)
  );
}

/** What the report says remains, less every request it may have missed. */
export function dailyRemaining(state: LedgerState): number | undefined {
  const { report } = state;
  if (!report) return undefined;
  const missed = state.slots.filter((s) => freesAt(s, 0, state.nowMs) > report.fromMs).length;
  return report.remaining - missed;
}

export function decideSlot(state: LedgerState, ask: SlotAsk): SlotDecision {
  const now = state.nowMs;
  if (state.pausedUntil !== null && state.pausedUntil > now) {
    const waitMs = state.pausedUntil - now;
    if (state.pauseReason === 'daily')
      return { grant: false, waitMs, daily: true, untilMs: state.pausedUntil, newPause: false };
    return { grant: false, waitMs, daily: false };
  }
  if (ask.lane === 'search' && state.searchPausedUntil !== null && state.searchPausedUntil > now) {
    return { grant: false, waitMs: state.searchPausedUntil - now, daily: false };
  }
  const inFlight = state.slots.some((s) => freesAt(s, 0, now) === Infinity);
  const report = state.report && reportValid(state.report, ask, now) ? state.report : null;
  const probing =
    state.probeSince !== null || (state.report !== null && report === null && ask.dailyHold.kind === 'pause');
  if (report) {
    const remaining = dailyRemaining({ ...state, report })!;
    if (remaining <= ask.dailyReserve) {
      const untilMs =
        ask.dailyHold.kind === 'midnight' ? (Math.floor(now / DAY_MS) + 1) * DAY_MS : now + ask.dailyHold.ms;
      return { grant: false, waitMs: untilMs - now, daily: true, untilMs, newPause: true };
    }
  } else if (probing && inFlight) {
    return { grant: false, waitMs: PROBE_RETRY_MS, daily: false };
  }
  const waitMs = windowWaitMs(state.slots, ask, now);
  return waitMs > 0 ? { grant: false, waitMs, daily: false } : { grant: true };
}
