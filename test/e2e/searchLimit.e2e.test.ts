/**
 * 25 calls starting at once, against a HubSpot sandbox that enforces HubSpot's search limit (five
 * searches per second, CRM search guide "Limitations"): the worker as a real process pushes every
 * call's context within seconds, and the sandbox never has to answer a search 429.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHubSpotSandbox, type HubSpotSandbox } from '../../src/sandbox/hubspot/index.js';
import { startServiceSandbox, type ServiceSandbox } from '../../src/sandbox/service/index.js';
import { scratchPostgres, type BenchDatabase } from '../../bench/worker/databases.js';
import { populate, TRICKY } from '../crm-hubspot/population.js';
import {
  createCall,
  freePort,
  removeTempDirs,
  startWorkerProcess,
  stopWorker,
  tempDataDir,
  waitFor,
  workerEnv,
  type Person,
  type WorkerProcess,
} from './harness.js';

const CALLS = 25;

let svc: ServiceSandbox;
let hs: HubSpotSandbox;
let worker: WorkerProcess;
let database: BenchDatabase | undefined;

beforeAll(async () => {
  // PostgreSQL when one answers (as in production installs), else the embedded database.
  const pgDb = await scratchPostgres();
  database = 'skipped' in pgDb ? undefined : pgDb;
  const port = await freePort();
  [svc, hs] = await Promise.all([
    startServiceSandbox({
      plan: 'enterprise',
      seedCalls: 0,
      analysisDelayMs: 50,
      webhookUrl: `http://127.0.0.1:${port}/webhooks`,
    }),
    startHubSpotSandbox(),
  ]);
  worker = await startWorkerProcess(
    workerEnv(
      svc,
      { kind: 'hubspot', sandbox: hs },
      {
        PORT: String(port),
        DATA_DIR: tempDataDir(),
        ...(database?.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
      },
    ),
    90_000,
  );
});

afterAll(async () => {
  if (worker) await stopWorker(worker).catch(() => undefined);
  await Promise.all([svc?.close(), hs?.close(), database?.drop()]);
  removeTempDirs();
});

/** 25 different people taking each lookup rule's branch: the seeded tricky ones, then a population. */
function participants(): Person[] {
  const valid = TRICKY.filter((p) => p.email.includes('@'));
  const byAddress = new Map([...valid, ...populate(hs)].map((p) => [p.email.trim().toLowerCase(), p]));
  return [...byAddress.values()].slice(0, CALLS).map((p) => ({
    email: p.email.trim(),
    name: p.name ?? p.email.trim().split('@')[0]!,
    ...(p.company ? { company: p.company } : {}),
  }));
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

describe('HubSpot search limit, end to end', () => {
  it(
    '25 simultaneous call starts all get their context, p95 <= 6 s, with 0 search 429s',
    { timeout: 120_000 },
    async () => {
      const people = participants();
      expect(new Set(people.map((p) => p.email.toLowerCase())).size).toBe(CALLS);
      // A long-running worker is warm: one call first, so the measure is not the first use of each module.
      const warmup = await createCall(svc, { name: 'Warm Up', email: 'warm.up@nowhere.example' });
      await waitFor('the warm-up context', () => svc.state.contexts(warmup).length > 0, {
        timeoutMs: 60_000,
      });
      hs.state.requests.clear();

      const started = await Promise.all(
        people.map(async (person) => {
          const at = Date.now();
          return { callId: await createCall(svc, person), at };
        }),
      );
      const pushedAt = await waitFor(
        `all ${CALLS} contexts to be pushed`,
        () => {
          const times = started.map(({ callId }) => svc.state.contexts(callId)[0]?.receivedAt);
          return times.every((t) => t !== undefined) ? times.map((t) => Date.parse(t!)) : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 50 },
      );

      const latencies = started.map(({ at }, i) => pushedAt[i]! - at);
      const p95 = percentile(latencies, 95);
      const searches = hs.state.requests.count('POST', '/search');
      const summary =
        `${CALLS} calls: context latency p50 ${percentile(latencies, 50)} ms, p95 ${p95} ms, ` +
        `max ${Math.max(...latencies)} ms; ${searches} searches, ` +
        `${hs.state.requests.records.length} HubSpot requests`;
      expect(hs.state.limits.rejected.SECONDLY, summary).toBe(0);
      expect(hs.state.requests.records.filter((r) => r.status === 429)).toEqual([]);
      expect(p95, summary).toBeLessThanOrEqual(6_000);
    },
  );
});
