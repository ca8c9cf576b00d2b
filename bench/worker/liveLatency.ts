/**
 * Context-push latency under a saturated budget: the worker's first poll queues a backfill of
 * analysed calls (lowest priority) on the `sales` plan; once the backfill has had a full minute
 * window to fill, live calls start one every `spacingMs` through the sandbox's admin API. A call's
 * latency runs from the Service emitting call.started (the event's created_at) to the sandbox
 * accepting the context (its receivedAt); both stamps come from the same clock. Each live call is
 * ended once its context is in, so its write-back competes too.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Logger } from '../../src/log/logger.js';
import { contextLatenciesMs, percentile } from './stats.js';
import {
  addAnalysedCalls,
  adminPost,
  matchingParticipant,
  PLANS,
  startBenchWorker,
  startSandboxes,
  workerStatus,
  type BenchPlan,
} from './harness.js';

export interface LiveLatencyOptions {
  /** Default the `sales` plan. */
  plan?: BenchPlan;
  backfillCalls: number;
  liveCalls: number;
  spacingMs: number;
  /** PostgreSQL instead of a fresh embedded database. */
  databaseUrl?: string | undefined;
  /** How long the backfill runs alone before the first live call. */
  warmupMs: number;
  logger: Logger;
}

export interface LiveLatencyResult {
  latenciesMs: number[];
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  /** Live calls whose context never arrived. */
  missing: number;
  /** Service requests accepted per minute while the live calls ran (sales allows 60). */
  requestsPerMinute: number;
  /** Backfill write-backs still queued at the end: proof the backfill never ran dry. */
  backfillQueuedAtEnd: number;
  rejected429: number;
  /** This process's event-loop delay over the whole run (worker and sandboxes share it), ms. */
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function benchLiveLatency(options: LiveLatencyOptions): Promise<LiveLatencyResult> {
  const plan = options.plan ?? PLANS.sales;
  const sb = await startSandboxes(plan);
  try {
    addAnalysedCalls(sb.svc, options.backfillCalls, 11);
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const run = await startBenchWorker(sb, plan, {
      logger: options.logger,
      databaseUrl: options.databaseUrl,
    });
    try {
      await sleep(options.warmupMs);
      const before = { at: Date.now(), accepted: sb.svc.state.countersSnapshot().accepted };
      const ids: string[] = [];
      const ended = new Set<string>();
      // Ends every live call whose context has arrived, as a real call ends after the coaching.
      const endCalls = async () => {
        for (const id of ids) {
          if (ended.has(id) || sb.svc.state.contexts(id).length === 0) continue;
          ended.add(id);
          await adminPost(sb.svc, `calls/${encodeURIComponent(id)}/complete`);
        }
      };
      for (let i = 0; i < options.liveCalls; i++) {
        const call = await adminPost(sb.svc, 'calls', { participant: matchingParticipant(i + 1) });
        ids.push(String(call.id));
        await sleep(options.spacingMs);
        await endCalls();
      }
      // The last contexts get at most 15 s more.
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline && ids.some((id) => sb.svc.state.contexts(id).length === 0))
        await sleep(50);
      await endCalls();
      const after = { at: Date.now(), accepted: sb.svc.state.countersSnapshot().accepted };
      const status = await workerStatus(run.worker);

      const latencies = contextLatenciesMs(sb.svc, ids);
      const sorted = [...latencies].sort((a, b) => a - b);
      return {
        latenciesMs: latencies,
        p50Ms: percentile(sorted, 50),
        p95Ms: percentile(sorted, 95),
        maxMs: sorted.at(-1) ?? Number.NaN,
        missing: ids.length - latencies.length,
        requestsPerMinute: ((after.accepted - before.accepted) / (after.at - before.at)) * 60_000,
        backfillQueuedAtEnd: status.jobs.queuedByPriority.backfill ?? 0,
        rejected429: sb.svc.state.countersSnapshot().rejected429,
        loopDelayP99Ms: loop.percentile(99) / 1e6,
        loopDelayMaxMs: loop.max / 1e6,
      };
    } finally {
      loop.disable();
      await run.stop();
    }
  } finally {
    await sb.close();
  }
}
