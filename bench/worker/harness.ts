/**
 * What every worker benchmark needs: the Service and HubSpot sandboxes, a worker started
 * in-process on them with settings built as the README's variables, analysed calls the poller will
 * find, and waiting on the worker's /status.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../src/config/config.js';
import { createLogger, silentLogger, type Logger } from '../../src/log/logger.js';
import type { PlanLimits, PlanName } from '../../src/budget/plans.js';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import {
  SANDBOX_PARTICIPANTS,
  startServiceSandbox,
  type Participant,
  type ServiceSandbox,
} from '@crm-sync/sandboxes/service';
import { fillContent, seedCalls } from '@crm-sync/sandboxes/service/seed';
import type { StatusSnapshot } from '../../src/ops/status.js';
import { startWorker, type WorkerHandle } from '../../src/worker/app.js';

export type Env = Record<string, string | undefined>;

export const REPO_ROOT = path.join(import.meta.dirname, '..', '..');

/** A Service plan as both sides see it: the sandbox enforces `limits`, the worker is told `plan`. */
export interface BenchPlan {
  label: string;
  plan: PlanName;
  limits: PlanLimits;
  /**
   * HubSpot's limits lifted too (sandbox and worker), so that the figure is the worker's own:
   * at HubSpot's documented 100 requests per 10 s and 5 searches per second, those bound a run
   * long before the worker does (docs/performance.md).
   */
  crmUnlimited?: boolean;
}

/** Webhook deliveries the Service sandbox has in flight at once. */
const WEBHOOK_SENDERS = 32;

/** HubSpot's limits, lifted beyond anything a bench run reaches. */
const CRM_UNLIMITED = { perWindow: 1_000_000, searchesPerSecond: 100_000 };

/** "No limit": an enterprise plan whose numbers are never reached here. */
export const UNLIMITED: PlanLimits = { ratePerMinute: 1_000_000, burstPerSecond: 100_000, dailyCap: null };

export const PLANS: Record<'sales' | 'team' | 'none', BenchPlan> = {
  sales: {
    label: 'sales',
    plan: 'sales',
    limits: { ratePerMinute: 60, burstPerSecond: 10, dailyCap: 10_000 },
  },
  team: { label: 'team', plan: 'team', limits: { ratePerMinute: 120, burstPerSecond: 20, dailyCap: 50_000 } },
  none: { label: 'no limit', plan: 'enterprise', limits: UNLIMITED, crmUnlimited: true },
};

/**
 * Participants the HubSpot sandbox resolves (by email or by company domain), so that every call
 * ends written back rather than skipped: the sandbox's own cases without the free-mail one, and
 * more people at the seeded companies so that the lookup cache does not answer every lookup.
 */
export function matchingParticipant(i: number): Participant {
  const known = SANDBOX_PARTICIPANTS.filter((p) => p.company);
  const direct = known[i % known.length];
  if (i % 2 === 0 || !direct) return { ...(direct ?? known[0]!) };
  const domains = ['acme.example', 'globex.example', 'initech.example', 'umbrella.example'];
  const companies = ['Acme Corp', 'Globex', 'Initech', 'Umbrella Inc'];
  const c = i % domains.length;
  return { name: `Person ${i}`, email: `person.${i}@${domains[c]}`, company: companies[c]! };
}

/**
 * Adds `count` analysed calls created within the last 20 hours (by default), so the worker's first
 * poll (which looks back 24 hours) finds them all; returns their ids. `window` {spanMs: 0, leadMs: 0}
 * makes them created now, for a later poll to find.
 */
export function addAnalysedCalls(
  svc: ServiceSandbox,
  count: number,
  seed = 7,
  window: { spanMs: number; leadMs: number } = { spanMs: 20 * 3_600_000, leadMs: 60_000 },
): string[] {
  const now = Date.now();
  const span = window.spanMs;
  const { calls } = seedCalls({ count, seed, nowMs: now });
  return calls.map((call, i) => {
    call.createdAtMs = now - span + Math.floor((i * span) / Math.max(1, count)) - window.leadMs;
    call.status = 'analyzed';
    call.durationSeconds ??= 1_200;
    call.participant = matchingParticipant(i);
    fillContent(call, seed, true);
    svc.state.addCall(call);
    return call.id;
  });
}

export interface Sandboxes {
  svc: ServiceSandbox;
  hs: HubSpotSandbox;
  close(): Promise<void>;
}

export async function startSandboxes(
  plan: BenchPlan,
  options: { seedCalls?: number } = {},
): Promise<Sandboxes> {
  const [svc, hs] = await Promise.all([
    // Several deliveries at once, as the contract's unordered delivery allows: one at a time, a
    // call.started would wait behind every followup.generated of a fast backfill in the sandbox.
    startServiceSandbox({
      limits: plan.limits,
      seedCalls: options.seedCalls ?? 0,
      webhookConcurrency: WEBHOOK_SENDERS,
    }),
    startHubSpotSandbox(plan.crmUnlimited ? { limits: CRM_UNLIMITED } : {}),
  ]);
  return { svc, hs, close: async () => void (await Promise.all([svc.close(), hs.close()])) };
}

/** The worker's settings, as the README's variables, for these sandboxes and this plan. */
export function workerEnv(
  sb: Sandboxes,
  plan: BenchPlan,
  db: { dataDir?: string; databaseUrl?: string },
): Env {
  const { limits } = plan;
  return {
    SERVICE_API_BASE_URL: sb.svc.url,
    SERVICE_API_KEY: sb.svc.apiKey,
    SERVICE_WEBHOOK_SECRET: sb.svc.webhookSecret,
    SERVICE_PLAN: plan.plan,
    ...(plan.plan === 'enterprise' && {
      SERVICE_RATE_PER_MINUTE: String(limits.ratePerMinute),
      SERVICE_BURST_PER_SECOND: String(limits.burstPerSecond),
      SERVICE_DAILY_CAP: limits.dailyCap === null ? 'unlimited' : String(limits.dailyCap),
    }),
    CRM: 'hubspot',
    HUBSPOT_BASE_URL: sb.hs.url,
    HUBSPOT_ACCESS_TOKEN: sb.hs.accessToken,
    DATA_DIR: db.dataDir,
    DATABASE_URL: db.databaseUrl,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    CONFIG_DIR: path.join(REPO_ROOT, 'config'),
  };
}

export function benchLogger(verbose: boolean): Logger {
  return verbose ? createLogger({ level: 'warn' }) : silentLogger;
}

export interface RunningWorker {
  worker: WorkerHandle;
  startedAt: number;
  stop(): Promise<void>;
}

/**
 * Starts the worker in-process on a fresh embedded database (or `databaseUrl`) and points the
 * Service sandbox's webhooks at it.
 */
export async function startBenchWorker(
  sb: Sandboxes,
  plan: BenchPlan,
  options: { logger: Logger; databaseUrl?: string | undefined },
): Promise<RunningWorker> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'crm-sync-bench-worker-'));
  const env = workerEnv(sb, plan, { dataDir, databaseUrl: options.databaseUrl });
  const config = parseConfig(env, { require: { service: true, crm: true } });
  const worker = await startWorker(config, {
    logger: options.logger,
    ...(plan.crmUnlimited && { hubspotLimits: CRM_UNLIMITED }),
  });
  sb.svc.state.settings.webhookUrl = `${worker.url}/webhooks`;
  return {
    worker,
    startedAt: Date.now(),
    async stop() {
      sb.svc.state.settings.webhookUrl = undefined;
      await worker.stop(2_000);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function workerStatus(worker: WorkerHandle): Promise<StatusSnapshot> {
  const res = await fetch(`${worker.url}/status`);
  if (!res.ok) throw new Error(`GET /status answered ${res.status}`);
  return (await res.json()) as StatusSnapshot;
}

/** Calls in a final sync state. */
export function settledCalls(status: StatusSnapshot): { written: number; skipped: number; failed: number } {
  const c = status.calls;
  return { written: c.written_back ?? 0, skipped: c.skipped ?? 0, failed: c.failed ?? 0 };
}

/**
 * Polls /status every `everyMs` until `done` says so or `timeoutMs` passes; returns the last
 * snapshot and when `done` first held (null on timeout).
 */
export async function waitForStatus(
  worker: WorkerHandle,
  done: (s: StatusSnapshot) => boolean,
  options: { timeoutMs: number; everyMs?: number },
): Promise<{ status: StatusSnapshot; doneAt: number | null }> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const status = await workerStatus(worker);
    if (done(status)) return { status, doneAt: Date.now() };
    if (Date.now() >= deadline) return { status, doneAt: null };
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 500));
  }
}

export function tempDir(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function adminPost(
  svc: ServiceSandbox,
  route: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${svc.url}/_admin/${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`POST /_admin/${route} answered ${res.status}: ${JSON.stringify(json)}`);
  return json;
}
