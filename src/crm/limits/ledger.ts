/**
 * Where a CRM's request slots are recorded. One process alone (the embedded database, a CLI
 * command without one) uses the in-memory ledger below; replicas on PostgreSQL share one in the
 * database (src/store/crmSlotLedger.ts), so HubSpot's ten-second, search and daily limits and
 * Salesforce's daily allocation, all per account, are counted once for all of them. Both decide
 * with slots.ts.
 */
import type { Clock } from '../../util/clock.js';
import {
  decideSlot,
  keepFromMs,
  MAX_FLIGHT_MS,
  type DailyReport,
  type HeldSlot,
  type LedgerState,
  type SlotAsk,
} from './slots.js';

/** A granted slot, at the ledger's time. */
export interface SlotGrant {
  id: number;
  startedAt: number;
}

export type Acquired =
  { granted: true; slot: SlotGrant } | { granted: false; waitMs: number; daily: boolean };

export interface CrmSlotLedger {
  /** A slot for a request about to start, or how long to wait (`daily`: the allowance is spent). */
  acquire(ask: SlotAsk): Promise<Acquired>;
  /**
   * The slot's request has answered, `elapsedMs` after its acquire was asked (this process's
   * clock: a duration, so no clock is compared with another's).
   */
  release(slot: SlotGrant, elapsedMs: number): void;
  /**
   * What the CRM reported of its daily allowance, in a response to a request started no earlier
   * than `fromMs` (ledger time: the earliest start among this process's requests in flight).
   */
  report(report: Omit<DailyReport, 'fromMs'>, fromMs: number): void;
  /**
   * A pause every process honours, of every lane or of searches only; never shortens a longer one.
   * A 'daily' one also drops the last report: after it, one request reads the allowance first.
   */
  pause(ms: number, scope: 'all' | 'search', reason?: 'rate' | 'daily'): Promise<void>;
  close(): Promise<void>;
}

type Pause = { until: number; reason: 'rate' | 'daily' } | null;

/** The ledger of one process: exact, since every request of the account passes through it. */
export class InMemoryCrmLedger implements CrmSlotLedger {
  private slots = new Map<number, HeldSlot>();
  private nextId = 1;
  private paused: Pause = null;
  private searchPausedUntil: number | null = null;
  private last: DailyReport | null = null;
  private probeSince: number | null = null;

  constructor(private readonly clock: Clock) {}

  acquire(ask: SlotAsk): Promise<Acquired> {
    const nowMs = this.clock.now();
    this.prune(nowMs);
    const decision = decideSlot(this.state(nowMs), ask);
    if (decision.grant) {
      const id = this.nextId++;
      this.slots.set(id, { lane: ask.lane, startedAt: nowMs, doneAt: null });
      return Promise.resolve({ granted: true, slot: { id, startedAt: nowMs } });
    }
    if (decision.daily && decision.newPause) {
      this.paused = { until: decision.untilMs, reason: 'daily' };
      // After the pause, one request reads what the CRM says remains (slots.ts, probing).
      if (ask.dailyHold.kind === 'pause') [this.last, this.probeSince] = [null, nowMs];
    }
    return Promise.resolve({ granted: false, waitMs: decision.waitMs, daily: decision.daily });
  }

  release(slot: SlotGrant): void {
    const held = this.slots.get(slot.id);
    if (held) held.doneAt = this.clock.now();
  }

  report(report: Omit<DailyReport, 'fromMs'>, fromMs: number): void {
    if (this.last && this.last.fromMs > fromMs) return;
    this.last = { ...report, fromMs };
    if (this.probeSince !== null && fromMs >= this.probeSince) this.probeSince = null;
  }

  pause(ms: number, scope: 'all' | 'search', reason: 'rate' | 'daily' = 'rate'): Promise<void> {
    const until = this.clock.now() + Math.max(0, ms);
    if (scope === 'search') this.searchPausedUntil = Math.max(this.searchPausedUntil ?? 0, until);
    else if (
      !this.paused ||
      until > this.paused.until ||
      (until === this.paused.until && reason === 'daily')
    ) {
      this.paused = { until, reason };
    }
    // The allowance the CRM said was spent: after the pause, one request reads it again first.
    if (reason === 'daily') [this.last, this.probeSince] = [null, this.clock.now()];
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private state(nowMs: number): LedgerState {
    return {
      nowMs,
      slots: [...this.slots.values()],
      pausedUntil: this.paused?.until ?? null,
      pauseReason: this.paused?.reason ?? null,
      searchPausedUntil: this.searchPausedUntil,
      report: this.last,
      probeSince: this.probeSince,
    };
  }

  /** Forgets slots no window or report can count any more. */
  private prune(nowMs: number): void {
    const keepFrom = keepFromMs(nowMs, this.last);
    for (const [id, s] of this.slots) {
      const done = s.doneAt ?? s.startedAt + MAX_FLIGHT_MS;
      if (done < keepFrom) this.slots.delete(id);
    }
  }
}
