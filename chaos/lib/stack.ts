/**
 * What a chaos scenario runs against: the Service and HubSpot sandboxes in this process (so the
 * checks can read what they recorded), an isolated database (a fresh PostgreSQL database per
 * scenario, or an embedded data directory), and the worker's settings as the README's variables,
 * with the run's distinctive secrets.
 */
import path from 'node:path';
import { PLAN_PRESETS, type PlanName } from '../../src/budget/plans.js';
import {
  startHubSpotSandbox,
  type HubSpotSandbox,
  type HubSpotSandboxOptions,
} from '@crm-sync/sandboxes/hubspot';
import {
  startSalesforceSandbox,
  type SalesforceSandbox,
  type SalesforceSandboxOptions,
} from '@crm-sync/sandboxes/salesforce';
import {
  startServiceSandbox,
  type ServiceSandbox,
  type ServiceSandboxOptions,
} from '@crm-sync/sandboxes/service';
import type { DatabaseKind } from '../../src/store/database.js';
import { freePort, workerEnv, type WorkerEnv } from '../../test/e2e/harness.js';
import type { ScenarioContext } from '../scenario.js';

/** The shared PostgreSQL server; each scenario gets a database of its own on it. */
const POSTGRES_URL = process.env.CHAOS_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Webhook redelivery after a failed attempt: about two minutes in all. */
const WEBHOOK_RETRY_DELAYS_MS = [500, 1_000, 2_000, 5_000, 10_000, 20_000, 30_000, 60_000];

export interface StackOptions {
  database: DatabaseKind;
  /** The Service plan, enforced by the sandbox and told to the worker. */
  plan: Exclude<PlanName, 'enterprise'>;
  /** Delay between a call's completion and analysis.ready (default 300 ms). */
  analysisDelayMs?: number;
  /** The worker's poll schedule (6-field cron); default every 10 s, so polls meet the kills. */
  pollSchedule?: string;
  /** More Service sandbox options (faults, limits). */
  service?: Partial<ServiceSandboxOptions>;
  /** More HubSpot sandbox options (limits, fault rates, token lifetime). */
  hubspot?: Partial<HubSpotSandboxOptions>;
  /** Given: a Salesforce sandbox with these options is started and the worker syncs to it. */
  salesforce?: SalesforceSandboxOptions;
}

export interface Stack {
  svc: ServiceSandbox;
  hs: HubSpotSandbox;
  /** Present when the options asked for Salesforce: the worker's CRM then. */
  sf: SalesforceSandbox | undefined;
  /** The PostgreSQL URL (with the run's password), or undefined on the embedded database. */
  databaseUrl: string | undefined;
  /** Settings for one worker process; `port` 0 picks a free one. */
  env(over?: Partial<WorkerEnv>): Promise<WorkerEnv>;
  close(): Promise<void>;
}

export async function startStack(ctx: ScenarioContext, options: StackOptions): Promise<Stack> {
  const { suite } = ctx.secrets;
  const [svc, hs] = await Promise.all([
    startServiceSandbox({
      plan: options.plan,
      seedCalls: 0,
      seed: Math.floor(ctx.random() * 2 ** 31),
      apiKey: suite.serviceApiKey,
      webhookSecret: suite.webhookSecret,
      analysisDelayMs: options.analysisDelayMs ?? 300,
      // The real Service retries a delivery for 24 hours (CONTRACT.md); the sandbox's default
      // schedule gives up after 6 s, less than a restart can take here.
      webhookRetry: { delaysMs: WEBHOOK_RETRY_DELAYS_MS },
      ...options.service,
    }),
    startHubSpotSandbox({ accessToken: suite.hubspotToken, ...options.hubspot }),
  ]);
  const sf = options.salesforce ? await startSalesforceSandbox(options.salesforce) : undefined;
  let databaseUrl: string | undefined;
  let drop: (() => Promise<void>) | undefined;
  if (options.database === 'postgres') {
    // The store tests' helper makes the isolated database; it reads the server from this variable.
    process.env.TEST_DATABASE_URL ||= POSTGRES_URL;
    const { createEmptyDatabase } = await import('../../test/store/helpers.js');
    const target = await createEmptyDatabase('postgres');
    const url = new URL(target.url!);
    // The server trusts local connections, so the password is never checked; it is there so the
    // secrets scan has a database password to look for.
    url.password = suite.databasePassword;
    databaseUrl = url.toString();
    drop = () => target.drop(false);
  }
  const dataDir = path.join(ctx.dir, 'data');
  return {
    svc,
    hs,
    sf,
    databaseUrl,
    async env(over = {}) {
      const port = over.PORT && over.PORT !== '0' ? over.PORT : String(await freePort());
      return workerEnv(svc, sf ? { kind: 'salesforce', sandbox: sf } : { kind: 'hubspot', sandbox: hs }, {
        SERVICE_PLAN: options.plan,
        SERVICE_RATE_PER_MINUTE: undefined,
        SERVICE_BURST_PER_SECOND: undefined,
        POLL_SCHEDULE: options.pollSchedule ?? '*/10 * * * * *',
        LOG_LEVEL: 'debug',
        DATABASE_URL: databaseUrl,
        ...over,
        DATA_DIR: over.DATA_DIR ?? dataDir,
        PORT: port,
      });
    },
    async close() {
      await Promise.all([svc.close(), hs.close(), sf?.close()]);
      await drop?.();
    },
  };
}

/** The plan's numbers, as the sandbox enforces them. */
export function planLimits(plan: Exclude<PlanName, 'enterprise'>) {
  return PLAN_PRESETS[plan];
}
