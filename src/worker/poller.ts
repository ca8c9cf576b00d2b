/**
 * The cursor poller: on the POLL_SCHEDULE (node-cron), the one leader among the worker processes
 * walks GET /v1/calls from the saved cursor. Leadership is a lease renewed every few seconds; when
 * the leader dies another process takes over once the lease lapses (well within a minute).
 */
import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from '../log/logger.js';
import { releaseLease, tryAcquireLease } from '../store/leaderLease.js';
import type { Clock } from '../util/clock.js';
import { POLL_CURSOR } from '../sync/cursors.js';
import { discoverCalls, type DiscoverDeps, type DiscoverResult } from './discover.js';
import type { Housekeeping } from './housekeeping.js';

export const POLLER_LEASE = 'poller';

export interface PollerOptions {
  schedule: string;
  workerId: string;
  leaseMs: number;
  /** On the very first run (no cursor yet), how far back to look. */
  firstLookbackMs: number;
  maxPagesPerRun: number;
}

export interface Poller {
  start(): void;
  /** One poll now, if this process leads; resolves with what it did (null when not leader). */
  pollNow(): Promise<DiscoverResult | null>;
  isLeader(): boolean;
  stop(): Promise<void>;
}

export function createPoller(
  deps: DiscoverDeps & { logger: Logger; onEnqueued?: () => void; housekeeping?: Housekeeping },
  options: PollerOptions,
): Poller {
  const { clock, logger } = deps;
  let leader = false;
  let task: ScheduledTask | undefined;
  let renewTimer: unknown;
  let running: Promise<DiscoverResult | null> | null = null;
  let stopped = false;
  const abort = new AbortController();

  async function renew(): Promise<boolean> {
    try {
      const { leader: now } = await tryAcquireLease(deps.db, {
        name: POLLER_LEASE,
        holder: options.workerId,
        ttlMs: options.leaseMs,
      });
      if (now !== leader)
        logger.info({ workerId: options.workerId }, now ? 'became poll leader' : 'lost poll leadership');
      leader = now;
    } catch (err) {
      logger.warn({ err }, 'poller: lease renewal failed');
      leader = false;
    }
    return leader;
  }

  function scheduleRenew(clockRef: Clock): void {
    renewTimer = clockRef.setTimer(() => {
      void renew().finally(() => {
        if (!stopped) scheduleRenew(clockRef);
      });
    }, options.leaseMs / 3);
  }

  async function pollOnce(): Promise<DiscoverResult | null> {
    if (!(await renew())) return null;
    const result = await discoverCalls(deps, {
      cursorName: POLL_CURSOR,
      reason: 'poll',
      priority: 'backfill',
      start: { createdAfter: new Date(clock.now() - options.firstLookbackMs).toISOString() },
      maxPages: options.maxPagesPerRun,
      signal: abort.signal,
    });
    if (result.enqueued > 0) deps.onEnqueued?.();
    logger.debug(result, 'poll finished');
    // The leader also does the housekeeping (src/worker/housekeeping.ts says how often).
    await deps.housekeeping?.runDue();
    return result;
  }

  function pollNow(): Promise<DiscoverResult | null> {
    // One walk at a time: a slow walk (budget saturated) is not stacked on by the next tick.
    running ??= pollOnce()
      .catch((err: unknown) => {
        // A walk cut short by stop() is expected, not a failure.
        if (stopped) logger.debug({ err }, 'poll stopped');
        else logger.warn({ err }, 'poll failed; next tick will try again');
        return null;
      })
      .finally(() => {
        running = null;
      });
    return running;
  }

  return {
    start() {
      task = cron.schedule(options.schedule, () => void pollNow(), {
        name: 'crm-sync-poller',
        noOverlap: true,
      });
      scheduleRenew(clock);
      void pollNow();
    },
    pollNow,
    isLeader: () => leader,
    async stop() {
      stopped = true;
      abort.abort(new Error('worker stopping'));
      await task?.stop();
      clock.clearTimer(renewTimer);
      await running?.catch(() => null);
      if (leader)
        await releaseLease(deps.db, { name: POLLER_LEASE, holder: options.workerId }).catch(() => false);
      leader = false;
    },
  };
}
