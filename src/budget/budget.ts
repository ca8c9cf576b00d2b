/**
 * The one gate every Service request of the process passes through: a priority queue whose head
 * asks the ledger for a slot, and sends in the tick of the grant. How it orders, hands slots on and
 * lets a slot lapse: docs/budget.md, "The gate".
 */
import { setMaxListeners } from 'node:events';
import PQueue from 'p-queue';
import { silentLogger, type Logger } from '../log/logger.js';
import type { Clock } from '../util/clock.js';
import { BudgetClosedError } from './errors.js';
import { InMemorySlotLedger } from './ledger.js';
import { RESERVE_BUCKET_MS, type LiveReserve } from './liveReserve.js';
import { createSendLag } from './sendLag.js';
import type { PlanLimits } from './plans.js';
import {
  DailyCapReachedError,
  PRIORITIES,
  type BudgetStats,
  type LedgerSnapshot,
  type Priority,
  type RequestBudget,
  type RunOptions,
  type SlotGrant,
  type SlotGrants,
  type SlotLedger,
} from './types.js';
import { Wakeup } from './wakeup.js';
import { dailyAllowance, dailyLiveReserve, paceFor } from './window.js';

export interface RequestBudgetDeps {
  limits: PlanLimits;
  clock: Clock;
  /** Where slots are recorded; default a new InMemorySlotLedger (this process only). */
  ledger?: SlotLedger;
  /** Slots of each window (1 s and 60 s) only `live` may take; default 1. */
  liveWindowReserve?: number;
  /**
   * Learns when live requests arrive and widens the 60 s window's reserve ahead of the times
   * they usually come (liveReserve.ts); `liveWindowReserve` stays the floor. Live requests passed
   * to `run` are recorded in it. Default none: the fixed reserve only.
   */
  liveReserve?: LiveReserve;
  /** Share of the daily cap only `live` may take, 0..1; default 0.1. */
  liveDailyReserve?: number;
  /** Requests in flight at once; default 16. */
  concurrency?: number;
  /**
   * Widens both windows, for clock skew and jitter between our start time and the Service's
   * receipt time; default 100 ms. Measured against the in-process sandbox: warm keep-alive
   * requests arrive within ~5 ms of their start, but a burst that opens new connections spreads
   * over ~90 ms; unpaced bursts drew 429s with 0, 5, 20 and 50 ms, paced traffic one 429 with 0 ms
   * (at the minute turnover). With pacing on only the minute window binds, so the margin costs
   * about margin / 60 s of throughput. A remote Service (TLS handshakes) may want more.
   */
  safetyMarginMs?: number;
  /**
   * Spreads lower-priority starts evenly over the minute (default true; window.ts paceFor and
   * paceEarliest), so the slots of a full minute window free up evenly and a live request waits
   * about 60 s / rate for one, instead of up to a minute behind a burst of backfill. The price:
   * lower priorities never burst, so over spans shorter than a minute they get rate-per-minute
   * spread evenly rather than the burst limit.
   */
  paceLowerPriorities?: boolean;
  logger?: Logger;
}

interface Ticket {
  priority: Priority;
  /** p-queue priority: higher first; priority tier, then arrival order. */
  rank: number;
  inQueue: boolean;
  /** When granted: when its slot was decided, and the time it was recorded for (sendLag.ts). */
  decidedAtMs: number;
  leavesAtMs: number;
}

/** 'lapsed': granted, but too late to start in its slot; it takes another. */
type HeadOutcome = 'granted' | 'yield' | 'lapsed';

const TIER_SPAN = 2 ** 40;
export const DEFAULT_SAFETY_MARGIN_MS = 100;
/**
 * How long after the ledger's answer the next heads may still take the slots it granted in bulk.
 * The queue hands over in microtasks, so this is only slack for a busy event loop; it keeps those
 * starts as close to their recorded time as a single grant's (whose ledger round trip lies between).
 */
export const SLOT_HANDOFF_MS = 5;

const noPrepaid = () => ({ count: 0, answeredAtMs: 0, decidedAtMs: 0, leavesAtMs: 0 });

export function createRequestBudget(deps: RequestBudgetDeps): RequestBudget {
  const { limits, clock } = deps;
  validateLimits(limits);
  const ledger = deps.ledger ?? new InMemorySlotLedger();
  const logger = deps.logger ?? silentLogger;
  const windowReserve = deps.liveWindowReserve ?? 1;
  const liveReserve = deps.liveReserve;
  const share = deps.liveDailyReserve ?? 0.1;
  if (!(share >= 0 && share < 1)) throw new Error('liveDailyReserve must be a share in [0, 1)');
  const dailyReserve = dailyLiveReserve(limits.dailyCap, share);
  const concurrency = deps.concurrency ?? 16;
  const marginMs = deps.safetyMarginMs ?? DEFAULT_SAFETY_MARGIN_MS;
  const paceMs = deps.paceLowerPriorities === false ? 0 : paceFor(limits);

  const queue = new PQueue({ concurrency: 1 });
  const wakeup = new Wakeup(clock);
  const closing = new AbortController();
  // Every waiting request listens for close; hundreds may wait.
  setMaxListeners(0, closing.signal);
  /** Tickets inside the p-queue (not the head), per priority. */
  const inQueue: Record<Priority, number> = { live: 0, writeback: 0, backfill: 0 };
  /** Requests of this process waiting for a slot (queue and head), per priority. */
  const waiting: Record<Priority, number> = { live: 0, writeback: 0, backfill: 0 };
  let seq = 0;
  let head: Ticket | null = null;
  let inFlight = 0;
  let pausedUntil = 0;
  let pauseReason: 'rate' | 'daily' = 'rate';
  let cachedSnapshot: LedgerSnapshot = { usedToday: 0, inLastSecond: 0, inLastMinute: 0, pausedUntil: null };
  let dailyCapLoggedUntil = 0;
  /** Slots granted in bulk, not yet taken by a head, and when the ledger answered. */
  let prepaid = noPrepaid();
  // Later than this after the time its slot was recorded for, a request is not sent: half the
  // margin, the other half being for what runs between its start and its send (client.ts).
  const startDeadlineMs = marginMs / 2;
  let lapsedSlots = 0;
  const sendLag = createSendLag();

  function higherWaiting(priority: Priority): boolean {
    for (const p of PRIORITIES) {
      if (p === priority) return false;
      if (inQueue[p] > 0) return true;
    }
    return false;
  }

  function queuedBehind(): number {
    return inQueue.live + inQueue.writeback + inQueue.backfill;
  }

  function dailyCapReached(resetsAt: number): DailyCapReachedError {
    if (resetsAt > dailyCapLoggedUntil) {
      dailyCapLoggedUntil = resetsAt;
      logger.info({ resetsAt: new Date(resetsAt).toISOString() }, 'Service daily request cap reached');
    }
    return new DailyCapReachedError(resetsAt);
  }

  /** Runs at the head of the queue until this ticket gets a slot or must step back. */
  async function waitForSlot(ticket: Ticket, signal: AbortSignal): Promise<HeadOutcome> {
    for (;;) {
      signal.throwIfAborted();
      const seen = wakeup.seen;
      if (higherWaiting(ticket.priority)) return 'yield';
      const nowMs = clock.now();
      let retryAtMs: number | null = null;
      if (pausedUntil > nowMs) {
        if (pauseReason === 'daily') throw dailyCapReached(pausedUntil);
        retryAtMs = pausedUntil;
      } else if (inFlight < concurrency) {
        // A bulk slot was granted under a lower priority's allowance, which live's contains.
        if (prepaid.count > 0 && nowMs - prepaid.answeredAtMs <= SLOT_HANDOFF_MS) {
          prepaid.count--;
          ticket.decidedAtMs = prepaid.decidedAtMs;
          ticket.leavesAtMs = prepaid.leavesAtMs;
          return 'granted';
        }
        if (nowMs - prepaid.answeredAtMs > SLOT_HANDOFF_MS) prepaid = noPrepaid();
        const minuteReserve = liveReserve?.minuteReserve(nowMs, limits.ratePerMinute, windowReserve);
        // Decided and recorded for when the request will leave, not for now; the windows widen by
        // as much, since a request may also leave sooner than that (sendLag.ts).
        const lagMs = sendLag.allowance(nowMs);
        const leavesAtMs = nowMs + lagMs;
        const request = {
          nowMs: leavesAtMs,
          leadMs: lagMs,
          priority: ticket.priority,
          limits,
          windowReserve,
          ...(minuteReserve !== undefined && { minuteReserve }),
          dailyReserve,
          marginMs: marginMs + lagMs,
          paceMs,
        };
        // Live asks for itself only: its slots may use the reserve, which others must not take.
        const wanted = ticket.priority === 'live' ? 1 : Math.min(concurrency - inFlight, 1 + queuedBehind());
        const grant: SlotGrants =
          wanted > 1 && ledger.acquireMany
            ? await ledger.acquireMany(request, wanted)
            : oneOf(await ledger.acquire(request));
        if (grant.granted) {
          if (grant.count > 1) {
            prepaid = { count: grant.count - 1, answeredAtMs: clock.now(), decidedAtMs: nowMs, leavesAtMs };
          }
          ticket.decidedAtMs = nowMs;
          ticket.leavesAtMs = leavesAtMs;
          return 'granted';
        }
        if (grant.dailyCapReached) throw dailyCapReached(grant.retryAtMs);
        // The ledger answers in leave times: the wait ends that much earlier.
        retryAtMs = Math.max(nowMs, grant.retryAtMs - (leavesAtMs - nowMs));
        // The learned reserve may shrink at the next bucket: ask again then rather than oversleep.
        if (minuteReserve !== undefined && minuteReserve > windowReserve) {
          retryAtMs = Math.min(retryAtMs, (Math.floor(nowMs / RESERVE_BUCKET_MS) + 1) * RESERVE_BUCKET_MS);
        }
      } // else: wait for a request in flight to finish (it wakes us).
      await wakeup.wait(retryAtMs, seen, signal);
    }
  }

  function start<T>(fn: () => Promise<T>): Promise<T> {
    inFlight++;
    let result: Promise<T>;
    try {
      result = fn();
    } catch (error) {
      result = Promise.reject(error);
    }
    const settle = () => {
      inFlight--;
      if (inFlight === concurrency - 1) wakeup.wake();
    };
    result.then(settle, settle);
    return result;
  }

  async function run<T>(priority: Priority, fn: () => Promise<T>, options: RunOptions = {}): Promise<T> {
    if (closing.signal.aborted) throw new BudgetClosedError();
    if (priority === 'live') liveReserve?.record(clock.now());
    const signal = options.signal ? AbortSignal.any([options.signal, closing.signal]) : closing.signal;
    const ticket: Ticket = {
      priority,
      rank: tierWeight(priority) * TIER_SPAN - seq++,
      inQueue: false,
      decidedAtMs: 0,
      leavesAtMs: 0,
    };
    let started: Promise<T> | undefined;
    const task = async (): Promise<HeadOutcome> => {
      leaveQueue(ticket);
      head = ticket;
      try {
        const outcome = await waitForSlot(ticket, signal);
        // An abort that landed while the ledger answered: the slot stays used, fn never starts.
        signal.throwIfAborted();
        if (outcome !== 'granted') return outcome;
        const nowMs = clock.now();
        sendLag.observe(ticket.decidedAtMs, nowMs);
        if (nowMs - ticket.leavesAtMs > startDeadlineMs) {
          // Its slot stays used (it cannot be given back), and the lag is now allowed for.
          lapsedSlots++;
          return 'lapsed';
        }
        started = start(fn);
        return outcome;
      } finally {
        // p-queue may start the next task before an aborted one has unwound.
        if (head === ticket) head = null;
      }
    };
    waiting[priority]++;
    try {
      for (;;) {
        ticket.inQueue = true;
        inQueue[priority]++;
        if (head && tierWeight(head.priority) < tierWeight(priority)) wakeup.wake();
        const outcome = await queue
          .add(task, { priority: ticket.rank, signal })
          .finally(() => leaveQueue(ticket));
        if (outcome === 'granted') break;
      }
    } finally {
      waiting[priority]--;
    }
    return started!;
  }

  function leaveQueue(ticket: Ticket): void {
    if (!ticket.inQueue) return;
    ticket.inQueue = false;
    inQueue[ticket.priority]--;
  }

  function pauseFor(ms: number, reason: 'rate' | 'daily'): void {
    // Slots granted before the 429 are not sent after it.
    prepaid = noPrepaid();
    const until = clock.now() + Math.max(0, ms);
    if (until > pausedUntil || (until === pausedUntil && reason === 'daily')) {
      pausedUntil = until;
      pauseReason = reason;
      logger.info(
        { reason, pausedUntil: new Date(until).toISOString() },
        'Service answered 429; all requests paused',
      );
    }
    ledger.pauseUntil(until, reason, clock.now()).catch((error: unknown) => {
      logger.warn({ err: error }, 'could not record the pause in the slot ledger');
    });
    wakeup.wake();
  }

  function stats(): BudgetStats {
    const nowMs = clock.now();
    let snapshot = cachedSnapshot;
    if (ledger.peek) snapshot = ledger.peek(nowMs);
    else {
      // Shared ledgers answer asynchronously: report the last answer, ask for a fresh one.
      ledger.snapshot(nowMs).then(
        (s) => (cachedSnapshot = s),
        () => undefined,
      );
    }
    const localPause = pausedUntil > nowMs ? pausedUntil : null;
    const ledgerPause =
      snapshot.pausedUntil !== null && snapshot.pausedUntil > nowMs ? snapshot.pausedUntil : null;
    const paused = Math.max(localPause ?? 0, ledgerPause ?? 0);
    const lowerShare = dailyAllowance(limits.dailyCap, dailyReserve, 'backfill');
    return {
      limits,
      usedToday: snapshot.usedToday,
      inLastSecond: snapshot.inLastSecond,
      inLastMinute: snapshot.inLastMinute,
      queued: { ...waiting },
      pausedUntil: paused > 0 ? paused : null,
      dailyCapReached:
        (localPause !== null && pauseReason === 'daily') ||
        (ledgerPause !== null && snapshot.pauseReason === 'daily') ||
        (lowerShare !== null && snapshot.usedToday >= lowerShare),
      lapsedSlots,
    };
  }

  async function close(): Promise<void> {
    if (!closing.signal.aborted) closing.abort(new BudgetClosedError());
    await queue.onIdle();
  }

  return { run, pauseFor, stats, close };
}

function oneOf(grant: SlotGrant): SlotGrants {
  return grant.granted ? { granted: true, count: 1 } : grant;
}

/** live 3, writeback 2, backfill 1. */
function tierWeight(priority: Priority): number {
  return PRIORITIES.length - PRIORITIES.indexOf(priority);
}

function validateLimits(limits: PlanLimits): void {
  const positive = (n: number) => Number.isInteger(n) && n > 0;
  if (!positive(limits.ratePerMinute) || !positive(limits.burstPerSecond)) {
    throw new Error('plan limits: ratePerMinute and burstPerSecond must be positive integers');
  }
  if (limits.dailyCap !== null && !positive(limits.dailyCap)) {
    throw new Error('plan limits: dailyCap must be a positive integer or null');
  }
}
