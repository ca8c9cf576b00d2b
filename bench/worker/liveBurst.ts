/**
 * Issue 12's burst: 30 call.started within 10 s while a backfill saturates the `sales` plan
 * (60/min). The worker runs as a real process on the sandboxes; its database holds yesterday's
 * calls, 30 of which started at this time of day (as a restarted worker finds them in sync_status),
 * so the learned live reserve (src/budget/liveReserve.ts) has something to learn from. The
 * backfill has the minute window to itself first (`warmupMs`); then the burst comes, and each
 * call's time from call.started (the event's created_at) to its context at the sandbox is taken.
 *
 * With `history: false` the database holds no such calls: the same run without anything learned.
 */
import { openDatabase } from '../../src/store/database.js';
import { migrate } from '../../src/store/migrations.js';
import { DAY_MS } from '../../src/budget/window.js';
import {
  freePort,
  removeTempDirs,
  startWorkerProcess,
  stopWorker,
  tempDataDir,
  waitFor,
} from '../../test/e2e/harness.js';
import {
  addAnalysedCalls,
  adminPost,
  matchingParticipant,
  PLANS,
  startSandboxes,
  workerEnv,
} from './harness.js';
import { contextLatenciesMs, percentile } from './stats.js';

export interface LiveBurstResult {
  calls: number;
  latenciesMs: number[];
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  /** Contexts that never arrived within a minute. */
  missing: number;
  /** Service requests accepted in the minute before the burst (sales allows 60): the saturation. */
  acceptedMinuteBefore: number;
  rejected429: number;
}

export interface LiveBurstOptions {
  calls?: number;
  spreadMs?: number;
  /** The backfill alone before the burst; default 150 s (the window full, then the reserve's lead). */
  warmupMs?: number;
  history?: boolean;
  databaseUrl?: string | undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Yesterday's calls that got a live context, `calls` of them started `spreadMs` apart from `at - 1 day`. */
async function seedHistory(
  dataDir: string,
  databaseUrl: string | undefined,
  at: number,
  calls: number,
  spreadMs: number,
) {
  const database = await openDatabase({ databaseUrl, dataDir });
  try {
    await migrate(database);
    const day = at - DAY_MS;
    await database.prisma.syncStatus.createMany({
      data: Array.from({ length: calls }, (_, i) => {
        const started = new Date(day + Math.floor((i * spreadMs) / calls));
        return {
          callId: `call_yesterday_${i}`,
          crm: 'hubspot',
          state: 'written_back',
          callCreatedAt: started,
          contextPushedAt: new Date(started.getTime() + 500),
          writtenBackAt: new Date(started.getTime() + 1_800_000),
        };
      }),
    });
  } finally {
    await database.close();
  }
}

export async function runLiveBurst(options: LiveBurstOptions = {}): Promise<LiveBurstResult> {
  const calls = options.calls ?? 30;
  const spreadMs = options.spreadMs ?? 10_000;
  const warmupMs = options.warmupMs ?? 150_000;
  const plan = PLANS.sales;
  const sb = await startSandboxes(plan);
  const dataDir = tempDataDir();
  try {
    addAnalysedCalls(sb.svc, 400, 13);
    // The worker needs some seconds to start; the burst time is fixed before, as history says it.
    const burstAt = Date.now() + warmupMs;
    if (options.history !== false) await seedHistory(dataDir, options.databaseUrl, burstAt, calls, spreadMs);
    const port = await freePort();
    const env = {
      ...workerEnv(sb, plan, { dataDir, databaseUrl: options.databaseUrl }),
      PORT: String(port),
      DATA_DIR: dataDir,
    };
    const worker = await startWorkerProcess(env, 120_000);
    sb.svc.state.settings.webhookUrl = `${worker.url}/webhooks`;
    try {
      await sleep(burstAt - 60_000 - Date.now());
      const before = sb.svc.state.countersSnapshot().accepted;
      await sleep(burstAt - Date.now());
      const acceptedMinuteBefore = sb.svc.state.countersSnapshot().accepted - before;
      const ids: string[] = [];
      for (let i = 0; i < calls; i++) {
        const call = await adminPost(sb.svc, 'calls', { participant: matchingParticipant(i + 1) });
        ids.push(String(call.id));
        await sleep(burstAt + ((i + 1) * spreadMs) / calls - Date.now());
      }
      await waitFor('the burst contexts', () => ids.every((id) => sb.svc.state.contexts(id).length > 0), {
        timeoutMs: 60_000,
        intervalMs: 100,
      }).catch(() => undefined);
      const latencies = contextLatenciesMs(sb.svc, ids);
      const sorted = [...latencies].sort((a, b) => a - b);
      return {
        calls,
        latenciesMs: latencies,
        p50Ms: percentile(sorted, 50),
        p95Ms: latencies.length < calls ? Number.POSITIVE_INFINITY : percentile(sorted, 95),
        maxMs: sorted.at(-1) ?? Number.NaN,
        missing: calls - latencies.length,
        acceptedMinuteBefore,
        rejected429: sb.svc.state.countersSnapshot().rejected429,
      };
    } finally {
      sb.svc.state.settings.webhookUrl = undefined;
      await stopWorker(worker).catch(() => undefined);
    }
  } finally {
    await sb.close();
    removeTempDirs();
  }
}
