/**
 * Sync throughput and Service cost per call.
 * - Backfill path: `calls` analysed calls wait at the Service; the worker's first poll finds them
 *   and writes them back at backfill priority. Calls per minute run from the worker's start to the
 *   moment the last one is written back (seen on /status, polled every 500 ms).
 * - Webhook path: `calls` live calls made through the sandbox's admin API (call.started, then
 *   completed once their context arrived: call.completed, transcript.ready, analysis.ready).
 * Requests per call come from the sandbox's counters: every API request the worker made, divided
 * by the calls written back.
 */
import type { HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import type { CountersSnapshot } from '@crm-sync/sandboxes/service';
import type { Logger } from '../../src/log/logger.js';
import {
  addAnalysedCalls,
  adminPost,
  matchingParticipant,
  settledCalls,
  startBenchWorker,
  startSandboxes,
  waitForStatus,
  type BenchPlan,
} from './harness.js';
import { startCpuShare } from './cpuShare.js';

export interface ThroughputResult {
  plan: string;
  calls: number;
  written: number;
  skipped: number;
  failed: number;
  seconds: number;
  callsPerMinute: number;
  /**
   * Calls written per second from the first write-back seen to the last (start-up, migrations
   * and the first poll left out): the worker's steady rate.
   */
  steadyCallsPerSecond: number;
  requests: number;
  requestsPerCall: number;
  byEndpoint: Record<string, number>;
  /** Most accepted requests in any 60 s span, to compare with the plan. */
  maxInAnyMinute: number;
  rejected429: number;
  /** HubSpot requests, all endpoints. */
  crmRequests: number;
  crmByPath: Record<string, number>;
  timedOut: boolean;
  /** Share of this process's CPU spent in the sandboxes' code (`cpuShare` runs only), else null. */
  sandboxCpuShare: number | null;
}

function summarise(
  plan: BenchPlan,
  calls: number,
  settled: { written: number; skipped: number; failed: number },
  seconds: number,
  counters: CountersSnapshot,
  crm: HubSpotSandbox,
  timedOut: boolean,
): ThroughputResult {
  return {
    plan: plan.label,
    calls,
    ...settled,
    seconds,
    callsPerMinute: (settled.written / seconds) * 60,
    steadyCallsPerSecond: Number.NaN,
    requests: counters.requests,
    requestsPerCall: counters.requests / Math.max(1, settled.written),
    byEndpoint: counters.byEndpoint,
    maxInAnyMinute: counters.maxInAnyMinute,
    rejected429: counters.rejected429,
    crmRequests: crm.state.requests.records.length,
    crmByPath: crm.state.requests.byPath(),
    timedOut,
    sandboxCpuShare: null,
  };
}

export async function benchBackfillThroughput(
  plan: BenchPlan,
  calls: number,
  options: {
    logger: Logger;
    timeoutMs: number;
    databaseUrl?: string | undefined;
    /** Profile the run to report the sandboxes' share of the process's CPU. */
    cpuShare?: boolean;
  },
): Promise<ThroughputResult> {
  const sb = await startSandboxes(plan);
  try {
    addAnalysedCalls(sb.svc, calls);
    const run = await startBenchWorker(sb, plan, {
      logger: options.logger,
      databaseUrl: options.databaseUrl,
    });
    try {
      const probe = options.cpuShare ? await startCpuShare('/packages/sandboxes/') : undefined;
      let first: { at: number; written: number } | undefined;
      const { status, doneAt } = await waitForStatus(
        run.worker,
        (s) => {
          const { written, skipped, failed } = settledCalls(s);
          if (!first && written > 0) first = { at: Date.now(), written };
          return written + skipped + failed >= calls;
        },
        { timeoutMs: options.timeoutMs },
      );
      const sandboxCpuShare = probe ? await probe.stop() : null;
      const seconds = ((doneAt ?? Date.now()) - run.startedAt) / 1000;
      const result = summarise(
        plan,
        calls,
        settledCalls(status),
        seconds,
        sb.svc.state.countersSnapshot(),
        sb.hs,
        doneAt === null,
      );
      result.sandboxCpuShare = sandboxCpuShare;
      if (first && doneAt !== null && doneAt > first.at) {
        result.steadyCallsPerSecond = (result.written - first.written) / ((doneAt - first.at) / 1000);
      }
      return result;
    } finally {
      await run.stop();
    }
  } finally {
    await sb.close();
  }
}

export async function benchWebhookPath(
  plan: BenchPlan,
  calls: number,
  options: { logger: Logger; timeoutMs: number },
): Promise<ThroughputResult> {
  const sb = await startSandboxes(plan);
  try {
    const run = await startBenchWorker(sb, plan, { logger: options.logger });
    try {
      const ids: string[] = [];
      for (let i = 0; i < calls; i++) {
        const call = await adminPost(sb.svc, 'calls', { participant: matchingParticipant(i) });
        ids.push(String(call.id));
      }
      // End each call once its context is in, as a real call would end after the coaching started.
      const pending = new Set(ids);
      const deadline = Date.now() + options.timeoutMs;
      while (pending.size > 0 && Date.now() < deadline) {
        for (const id of [...pending]) {
          if (sb.svc.state.contexts(id).length === 0) continue;
          pending.delete(id);
          await adminPost(sb.svc, `calls/${encodeURIComponent(id)}/complete`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const { status, doneAt } = await waitForStatus(
        run.worker,
        (s) => settledCalls(s).written + settledCalls(s).skipped + settledCalls(s).failed >= calls,
        { timeoutMs: Math.max(1_000, deadline - Date.now()) },
      );
      const seconds = ((doneAt ?? Date.now()) - run.startedAt) / 1000;
      return summarise(
        plan,
        calls,
        settledCalls(status),
        seconds,
        sb.svc.state.countersSnapshot(),
        sb.hs,
        doneAt === null,
      );
    } finally {
      await run.stop();
    }
  } finally {
    await sb.close();
  }
}

/** "analysis 1.00, followups 1.00, list 0.03": requests per call by endpoint, for the notes. */
export function endpointBreakdown(byEndpoint: Record<string, number>, perCalls: number): string {
  return Object.entries(byEndpoint)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([endpoint, n]) => {
      const name =
        endpoint === 'GET /v1/calls' ? 'list' : endpoint.replace(/^\w+ \/v1\/calls\/:id\/?/, '') || 'call';
      return `${name} ${(n / Math.max(1, perCalls)).toFixed(2)}`;
    })
    .join(', ');
}
