/**
 * Many calls starting at once against a HubSpot sandbox that enforces HubSpot's search limit (five
 * searches per second, CRM search guide "Limitations"): the worker as a real process, each call's
 * time from its call.started to its context at the Service. Shared by `npm run bench` (row 7, the
 * p95 target) and the end-to-end test (every context pushed, no search 429).
 */
import { startHubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startServiceSandbox } from '@crm-sync/sandboxes/service';
import { populate, TRICKY } from '../../test/crm-hubspot/population.js';
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
} from '../../test/e2e/harness.js';

export interface CallStartBurst {
  calls: number;
  latenciesMs: number[];
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  searches: number;
  /** Search 429s the sandbox had to answer (HubSpot's SECONDLY policy). */
  search429: number;
  /** Every 429 the sandbox answered. */
  all429: number;
  hubspotRequests: number;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

/** Different people taking each lookup rule's branch: the seeded tricky ones, then a population. */
function participants(hs: Parameters<typeof populate>[0], calls: number): Person[] {
  const valid = TRICKY.filter((p) => p.email.includes('@'));
  const byAddress = new Map([...valid, ...populate(hs)].map((p) => [p.email.trim().toLowerCase(), p]));
  return [...byAddress.values()].slice(0, calls).map((p) => ({
    email: p.email.trim(),
    name: p.name ?? p.email.trim().split('@')[0]!,
    ...(p.company ? { company: p.company } : {}),
  }));
}

export async function runCallStartBurst(options: {
  calls?: number;
  databaseUrl?: string;
}): Promise<CallStartBurst> {
  const calls = options.calls ?? 25;
  const port = await freePort();
  const [svc, hs] = await Promise.all([
    startServiceSandbox({
      plan: 'enterprise',
      seedCalls: 0,
      analysisDelayMs: 50,
      webhookUrl: `http://127.0.0.1:${port}/webhooks`,
    }),
    startHubSpotSandbox(),
  ]);
  const env = workerEnv(
    svc,
    { kind: 'hubspot', sandbox: hs },
    {
      PORT: String(port),
      DATA_DIR: tempDataDir(),
      ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
    },
  );
  const worker = await startWorkerProcess(env, 90_000);
  try {
    const people = participants(hs, calls);
    // A long-running worker is warm: one call first, so the measure is not the first use of each module.
    const warmup = await createCall(svc, { name: 'Warm Up', email: 'warm.up@nowhere.example' });
    await waitFor('the warm-up context', () => svc.state.contexts(warmup).length > 0, { timeoutMs: 60_000 });
    hs.state.requests.clear();
    const started = await Promise.all(
      people.map(async (person) => {
        const at = Date.now();
        return { callId: await createCall(svc, person), at };
      }),
    );
    const pushedAt = await waitFor(
      `all ${people.length} contexts to be pushed`,
      () => {
        const times = started.map(({ callId }) => svc.state.contexts(callId)[0]?.receivedAt);
        return times.every((t) => t !== undefined) ? times.map((t) => Date.parse(t!)) : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    const latenciesMs = started.map(({ at }, i) => pushedAt[i]! - at);
    return {
      calls: people.length,
      latenciesMs,
      p50Ms: percentile(latenciesMs, 50),
      p95Ms: percentile(latenciesMs, 95),
      maxMs: Math.max(...latenciesMs),
      searches: hs.state.requests.count('POST', '/search'),
      search429: hs.state.limits.rejected.SECONDLY ?? 0,
      all429: hs.state.requests.records.filter((r) => r.status === 429).length,
      hubspotRequests: hs.state.requests.records.length,
    };
  } finally {
    await stopWorker(worker).catch(() => undefined);
    await Promise.all([svc.close(), hs.close()]);
    removeTempDirs();
  }
}
