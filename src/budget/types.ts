/**
 * The contract of the one request budget that every Service request passes through.
 * Callers (the Service client) only see `RequestBudget`; where slots come from (this process, or a
 * ledger shared by several processes through the database) is behind `SlotLedger`.
 */
import type { PlanLimits } from './plans.js';

/** Highest first: context for a live call, then write-back of finished calls, then backfill. */
export type Priority = 'live' | 'writeback' | 'backfill';
export const PRIORITIES: readonly Priority[] = ['live', 'writeback', 'backfill'];

export interface BudgetStats {
  limits: PlanLimits;
  /** Requests started in the current UTC day (by every process sharing the ledger). */
  usedToday: number;
  /** Requests started in the last 1 s and the last 60 s. */
  inLastSecond: number;
  inLastMinute: number;
  /** Requests waiting for a slot, per priority (this process). */
  queued: Record<Priority, number>;
  /** Set while the gate is paused after a 429 (epoch ms), else null. */
  pausedUntil: number | null;
  /** True when the daily cap (for the priority's share) is spent until the next UTC midnight. */
  dailyCapReached: boolean;
  /** Slots granted to requests that then started too late to be sent in them (this process). */
  lapsedSlots: number;
}

export interface RunOptions {
  signal?: AbortSignal | undefined;
  /** A short label for logs and metrics, e.g. the endpoint. */
  label?: string | undefined;
}

export interface RequestBudget {
  /**
   * Waits for a slot at `priority`, then runs `fn`, which must make exactly one Service request.
   * Rejects with DailyCapReachedError when the day's cap (for that priority) is spent.
   */
  run<T>(priority: Priority, fn: () => Promise<T>, options?: RunOptions): Promise<T>;
  /** The Service answered 429: hold every request (not just the one) for `ms`. */
  pauseFor(ms: number, reason: 'rate' | 'daily'): void;
  stats(): BudgetStats;
  /** Stops accepting work; pending waits reject. */
  close(): Promise<void>;
}

/** Rejected by the budget when the daily cap is spent; carries when it resets. */
export class DailyCapReachedError extends Error {
  readonly code = 'BUDGET_DAILY_CAP';
  constructor(readonly resetsAt: number) {
    super(`Service daily request cap reached; resets at ${new Date(resetsAt).toISOString()}`);
    this.name = 'DailyCapReachedError';
  }
}

/**
 * Where request slots are recorded. The in-memory ledger serves one process; a database-backed
 * ledger (store/) lets several processes share one budget. `acquire` must be atomic: either it
 * records a request at `now` and says so, or it records nothing and says when to try again.
 */
export interface SlotLedger {
  acquire(request: SlotRequest): Promise<SlotGrant>;
  /**
   * Up to `wanted` slots at once, all recorded at `request.nowMs`, for requests that are all ready
   * to leave now (one round trip instead of `wanted`; window.ts decideSlots). Grants at least one
   * or none. Ledgers without it are asked one slot at a time.
   */
  acquireMany?(request: SlotRequest, wanted: number): Promise<SlotGrants>;
  /**
   * Records a pause that every process must honour (a 429 seen by any of them). A 'daily' pause
   * makes `acquire` answer `dailyCapReached: true` until it ends. Never shortens a longer pause.
   * `nowMs` is the caller's time when it set `untilMs`: a shared ledger keeps the pause's length
   * and ends it by its own clock.
   */
  pauseUntil(untilMs: number, reason: 'rate' | 'daily', nowMs: number): Promise<void>;
  snapshot(nowMs: number): Promise<LedgerSnapshot>;
  /** A synchronous, possibly stale, snapshot for `stats()`; ledgers that cannot omit it. */
  peek?(nowMs: number): LedgerSnapshot;
}

export interface SlotRequest {
  /** The caller's time the request is decided for; a shared ledger decides by its own clock. */
  nowMs: number;
  /**
   * How long after the ledger's answer the request will leave (`nowMs` less the caller's now): a
   * ledger on another clock decides for its own now plus this. Default 0.
   */
  leadMs?: number;
  priority: Priority;
  limits: PlanLimits;
  /** Slots of each window that only `live` may take. */
  windowReserve: number;
  /** Slots of the 60 s window only `live` may take, when it differs (liveReserve.ts); default windowReserve. */
  minuteReserve?: number;
  /** Requests of the daily cap that only `live` may take. */
  dailyReserve: number;
  /** Widens both windows by this many ms, against clock skew and network jitter (default 0). */
  marginMs?: number;
  /** Pace non-live requests keep over all starts, ms per request (window.ts paceEarliest); default 0 = none. */
  paceMs?: number;
}

export type SlotGrant = { granted: true } | { granted: false; retryAtMs: number; dailyCapReached: boolean };

/** `count` >= 1 slots granted, or none (then as SlotGrant's refusal). */
export type SlotGrants =
  { granted: true; count: number } | { granted: false; retryAtMs: number; dailyCapReached: boolean };

export interface LedgerSnapshot {
  usedToday: number;
  inLastSecond: number;
  inLastMinute: number;
  pausedUntil: number | null;
  /** Why the ledger is paused, when it is. */
  pauseReason?: 'rate' | 'daily' | null;
}
