import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { resolvePlan, type PlanLimits, type PlanName } from '../budget/plans.js';
import type { HubSpotConfig, SalesforceConfig } from '../crm/settings.js';
import type { CrmName } from '../crm/types.js';
import type { DriftThresholds } from './drift.js';
import { requiredProblems, unknownKeyProblems } from './problems.js';
import { rawConfigSchema, SECRET_KEYS, type RawConfig } from './schema.js';

export interface ServiceConfig {
  baseUrl: string;
  apiKey: string;
  webhookSecrets: string[];
  plan: PlanName;
  limits: PlanLimits;
  /** Share of the daily cap kept for live-call work (0..0.9). */
  liveDailyReserve: number;
  /** Slots of each sliding window kept for live-call work. */
  liveWindowReserve: number;
  requestTimeoutMs: number;
}

export interface AppConfig {
  service: ServiceConfig;
  /** PostgreSQL URL; when absent the embedded database under `dataDir` is used. */
  databaseUrl?: string | undefined;
  dataDir: string;
  crm: CrmName;
  hubspot: HubSpotConfig;
  salesforce: SalesforceConfig;
  /** CREDENTIALS_KEY: seals rotated refresh tokens stored in the database (src/util/secretBox.ts). */
  credentialsKey?: string | undefined;
  http: {
    port: number;
    host: string;
    maxBodyBytes: number;
    adminToken?: string | undefined;
    /** PUBLIC_URL's origin, when set. */
    publicOrigin?: string | undefined;
    trustProxy: boolean;
  };
  pollSchedule: string;
  logLevel: string;
  configDir: string;
  /** Silence and drift warnings (WEBHOOK_SILENCE_MINUTES, ANALYSIS_LAG_MINUTES, NO_MATCH_*). */
  drift: DriftThresholds;
}

/** Thrown at start when configuration is missing or wrong; `problems` name each variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(
      `Invalid configuration (${problems.length} ${problems.length === 1 ? 'problem' : 'problems'}):\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/**
 * Reads `${CONFIG_DIR}/crm-sync.yaml` if present: a flat map of the same variable names. Values
 * that are not plain come back as problems, to be listed with the others.
 */
export function readConfigFile(configDir: string): { settings: Env; problems: string[] } {
  const file = path.join(configDir, 'crm-sync.yaml');
  if (!existsSync(file)) return { settings: {}, problems: [] };
  let parsed: unknown;
  try {
    parsed = parseYaml(readFileSync(file, 'utf8'));
  } catch (err) {
    // Nothing in the file can be trusted then; the other settings are not checked against it.
    throw new ConfigError([`${file}: not valid YAML (${(err as Error).message.split('\n')[0]})`]);
  }
  if (parsed === null || parsed === undefined) return { settings: {}, problems: [] };
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError([`${file}: expected a map of VARIABLE: value`]);
  }
  const settings: Env = {};
  const problems: string[] = [];
  for (const [k, v] of Object.entries(parsed as Record<string, unknown>)) {
    if (v === null || v === undefined) continue;
    if (typeof v === 'object') problems.push(`${file}: ${k}: expected a plain value`);
    else settings[k] = String(v);
  }
  return { settings, problems };
}

export interface LoadOptions {
  /** Which parts must be complete: the Service credentials, the CRM credentials. */
  require?: { service?: boolean; crm?: boolean };
}

/** Validates raw settings into an AppConfig, collecting every problem into one ConfigError. */
export function parseConfig(env: Env, options: LoadOptions = {}): AppConfig {
  const configDir = env.CONFIG_DIR?.trim() || './config';
  const { settings: fileSettings, problems: fileProblems } = readConfigFile(configDir);
  const merged: Env = { ...fileSettings, ...env };
  const known = Object.keys(rawConfigSchema.shape);

  // Each setting is checked on its own, so one malformed value does not hide the others, nor a
  // missing one; the message then lists every fault together.
  const malformed = new Map<string, string>();
  const parsed: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(rawConfigSchema.shape)) {
    const result = field.safeParse(merged[key]);
    if (result.success) {
      parsed[key] = result.data;
      continue;
    }
    const secret = (SECRET_KEYS as readonly string[]).includes(key);
    // Never echo a secret's value back in an error.
    const got = !secret && merged[key] !== undefined ? ` (got "${merged[key]}")` : '';
    malformed.set(key, `${key}: ${result.error.issues[0]?.message ?? 'invalid'}${got}`);
  }
  const raw = parsed as Partial<RawConfig>;
  const missing = [...requiredProblems(raw, options.require ?? {})].filter(
    (problem) => !malformed.has(problem.slice(0, problem.indexOf(':'))),
  );
  const problems = [
    ...missing,
    ...malformed.values(),
    ...fileProblems,
    ...unknownKeyProblems(path.join(configDir, 'crm-sync.yaml'), Object.keys(fileSettings), known),
  ];

  let limits: PlanLimits | undefined;
  const planKeys = [
    'SERVICE_PLAN',
    'SERVICE_RATE_PER_MINUTE',
    'SERVICE_BURST_PER_SECOND',
    'SERVICE_DAILY_CAP',
  ];
  if (!planKeys.some((key) => malformed.has(key))) {
    try {
      limits = resolvePlan(raw.SERVICE_PLAN as PlanName, {
        ratePerMinute: raw.SERVICE_RATE_PER_MINUTE,
        burstPerSecond: raw.SERVICE_BURST_PER_SECOND,
        dailyCap: raw.SERVICE_DAILY_CAP === 'unlimited' ? null : raw.SERVICE_DAILY_CAP,
      });
    } catch (err) {
      problems.push(`SERVICE_PLAN: ${(err as Error).message}`);
    }
  }
  if (
    limits &&
    raw.SERVICE_LIVE_WINDOW_RESERVE !== undefined &&
    raw.SERVICE_LIVE_WINDOW_RESERVE >= limits.burstPerSecond
  ) {
    problems.push(
      `SERVICE_LIVE_WINDOW_RESERVE: expected fewer than the burst limit (${limits.burstPerSecond}), got ${raw.SERVICE_LIVE_WINDOW_RESERVE}`,
    );
  }
  if (problems.length > 0 || !limits) throw new ConfigError(problems);
  return toAppConfig(raw as RawConfig, limits);
}

function toAppConfig(raw: RawConfig, limits: PlanLimits): AppConfig {
  return {
    service: {
      baseUrl: raw.SERVICE_API_BASE_URL ?? '',
      apiKey: raw.SERVICE_API_KEY ?? '',
      webhookSecrets: [raw.SERVICE_WEBHOOK_SECRET, raw.SERVICE_WEBHOOK_SECRET_PREVIOUS].filter(
        (s): s is string => Boolean(s),
      ),
      plan: raw.SERVICE_PLAN as PlanName,
      limits,
      liveDailyReserve: raw.SERVICE_LIVE_DAILY_RESERVE,
      liveWindowReserve: raw.SERVICE_LIVE_WINDOW_RESERVE,
      requestTimeoutMs: raw.SERVICE_REQUEST_TIMEOUT_MS,
    },
    databaseUrl: raw.DATABASE_URL,
    dataDir: raw.DATA_DIR,
    crm: raw.CRM,
    hubspot: {
      baseUrl: raw.HUBSPOT_BASE_URL,
      apiVersion: raw.HUBSPOT_API_VERSION,
      accessToken: raw.HUBSPOT_ACCESS_TOKEN,
      clientId: raw.HUBSPOT_CLIENT_ID,
      clientSecret: raw.HUBSPOT_CLIENT_SECRET,
      refreshToken: raw.HUBSPOT_REFRESH_TOKEN,
      portalId: raw.HUBSPOT_PORTAL_ID,
    },
    salesforce: {
      instanceUrl: raw.SALESFORCE_INSTANCE_URL,
      loginUrl: raw.SALESFORCE_LOGIN_URL,
      accessToken: raw.SALESFORCE_ACCESS_TOKEN,
      clientId: raw.SALESFORCE_CLIENT_ID,
      clientSecret: raw.SALESFORCE_CLIENT_SECRET,
      refreshToken: raw.SALESFORCE_REFRESH_TOKEN,
      username: raw.SALESFORCE_USERNAME,
      jwtPrivateKey: raw.SALESFORCE_JWT_PRIVATE_KEY,
      apiVersion: raw.SALESFORCE_API_VERSION,
      limitPauseMs: raw.SALESFORCE_LIMIT_PAUSE_MS,
    },
    credentialsKey: raw.CREDENTIALS_KEY,
    http: {
      port: raw.PORT,
      host: raw.HOST,
      maxBodyBytes: raw.WEBHOOK_MAX_BODY_BYTES,
      adminToken: raw.ADMIN_TOKEN,
      publicOrigin: raw.PUBLIC_URL === undefined ? undefined : new URL(raw.PUBLIC_URL).origin,
      trustProxy: raw.TRUST_PROXY,
    },
    pollSchedule: raw.POLL_SCHEDULE,
    logLevel: raw.LOG_LEVEL,
    configDir: raw.CONFIG_DIR,
    drift: {
      webhookSilenceMs: raw.WEBHOOK_SILENCE_MINUTES * 60_000,
      analysisLagMs: raw.ANALYSIS_LAG_MINUTES * 60_000,
      noMatchWindowMs: raw.NO_MATCH_WINDOW_MINUTES * 60_000,
      noMatchRise: raw.NO_MATCH_RISE,
      noMatchMinCalls: raw.NO_MATCH_MIN_CALLS,
    },
  };
}

/** Loads configuration from the process environment (and the optional file). */
export function loadConfig(options: LoadOptions = {}, env: Env = process.env): AppConfig {
  return parseConfig(env, options);
}
