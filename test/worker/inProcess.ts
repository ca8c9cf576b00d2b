/**
 * The real worker (startWorker: pipelines, runner, poller, HTTP) in the test process on a fake
 * clock, against the Service and CRM sandboxes on the same clock, on an embedded database in a
 * fresh data dir. Time moves only when a test advances it; waits are on conditions, with deadlines.
 */
import path from 'node:path';
import { parseConfig } from '../../src/config/config.js';
import { createLogger, type Logger } from '../../src/log/logger.js';
import type { HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import type { ServiceSandbox } from '@crm-sync/sandboxes/service';
import type { FakeClock } from '../../src/util/fakeClock.js';
import { startWorker, type WorkerHandle } from '../../src/worker/app.js';
import { freePort, POLL_NEVER, REPO_ROOT, waitFor } from '../e2e/harness.js';
import { createMigratedDatabase } from '../store/helpers.js';

export const ROOMY_LIMITS = { ratePerMinute: 100_000, burstPerSecond: 10_000, dailyCap: null };

export interface InProcessWorker {
  handle: WorkerHandle;
  env: Record<string, string>;
  /** Stops the worker and removes its database. */
  close(): Promise<void>;
  logLines: string[];
  get<T>(path: string): Promise<{ status: number; body: T }>;
  /** The call's sync row (GET /admin/calls/:id), or undefined. */
  call(
    id: string,
  ): Promise<{ state: string; lastErrorCode: string | null; lastErrorMessage: string | null } | undefined>;
}

export async function startInProcessWorker(
  clock: FakeClock,
  svc: ServiceSandbox,
  /** The HubSpot sandbox the worker writes to; null when `over` configures another CRM. */
  hs: HubSpotSandbox | null,
  over: Record<string, string> = {},
): Promise<InProcessWorker> {
  // A copy of a migrated template: a fresh embedded database takes seconds to initialise.
  const database = await createMigratedDatabase('embedded');
  const env: Record<string, string> = {
    SERVICE_API_BASE_URL: svc.url,
    SERVICE_API_KEY: svc.apiKey,
    SERVICE_WEBHOOK_SECRET: svc.webhookSecret,
    SERVICE_PLAN: 'enterprise',
    SERVICE_RATE_PER_MINUTE: String(ROOMY_LIMITS.ratePerMinute),
    SERVICE_BURST_PER_SECOND: String(ROOMY_LIMITS.burstPerSecond),
    SERVICE_DAILY_CAP: 'unlimited',
    ...(hs && { CRM: 'hubspot', HUBSPOT_BASE_URL: hs.url, HUBSPOT_ACCESS_TOKEN: hs.accessToken }),
    CONFIG_DIR: path.join(REPO_ROOT, 'config'),
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    DATA_DIR: database.dataDir,
    POLL_SCHEDULE: POLL_NEVER,
    ...over,
  };
  const logLines: string[] = [];
  const logger: Logger = createLogger({ level: 'info' }, { write: (l: string) => void logLines.push(l) });
  const handle = await startWorker(parseConfig(env), { logger, clock });
  const get = async <T>(p: string) => {
    const res = await fetch(`${handle.url}${p}`);
    return { status: res.status, body: (await res.json()) as T };
  };
  return {
    handle,
    env,
    async close() {
      await handle.stop(1_000);
      await database.drop(false);
    },
    logLines,
    get,
    async call(id) {
      const res = await get<{
        status: { state: string; lastErrorCode: string | null; lastErrorMessage: string | null };
      }>(`/admin/calls/${encodeURIComponent(id)}`);
      return res.status === 404 ? undefined : res.body.status;
    },
  };
}

/** POST to a sandbox admin route. */
export async function adminPost(url: string, body?: unknown): Promise<void> {
  const res = await fetch(url, {
    method: 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`POST ${url}: ${res.status} ${await res.text()}`);
}

/**
 * Waits for `check` while moving the fake clock on by `stepMs` between looks: the Service budget
 * paces write-back and backfill requests (and the runner idles) on that clock, so the worker only
 * gets on when it moves. Returns the fake time that passed.
 */
export async function tickUntil(
  clock: FakeClock,
  what: string,
  check: () => Promise<boolean>,
  options: { stepMs?: number; describe?: () => unknown } = {},
): Promise<number> {
  const started = clock.now();
  await waitFor(
    what,
    async () => {
      if (await check()) return true;
      await clock.advance(options.stepMs ?? 200);
      return false;
    },
    { intervalMs: 10, timeoutMs: 60_000, ...(options.describe ? { describe: options.describe } : {}) },
  );
  return clock.now() - started;
}
