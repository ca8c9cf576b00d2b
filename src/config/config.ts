import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { resolvePlan, type PlanLimits, type PlanName } from '../budget/plans.js';
import { rawConfigSchema, SECRET_KEYS, type RawConfig } from './schema.js';

export type CrmName = 'hubspot' | 'salesforce';

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

export interface HubSpotConfig {
  baseUrl: string;
  accessToken?: string | undefined;
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  refreshToken?: string | undefined;
  /** For console links to records (https://app.hubspot.com/contacts/{portalId}/record/...). */
  portalId?: string | undefined;
}

export interface SalesforceConfig {
  instanceUrl?: string | undefined;
  loginUrl: string;
  accessToken?: string | undefined;
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  refreshToken?: string | undefined;
  username?: string | undefined;
  jwtPrivateKey?: string | undefined;
  apiVersion: string;
}

export interface AppConfig {
  service: ServiceConfig;
  /** PostgreSQL URL; when absent the embedded database under `dataDir` is used. */
  databaseUrl?: string | undefined;
  dataDir: string;
  crm: CrmName;
  hubspot: HubSpotConfig;
  salesforce: SalesforceConfig;
  http: { port: number; host: string; maxBodyBytes: number; adminToken?: string | undefined };
  pollSchedule: string;
  logLevel: string;
  configDir: string;
}

/** Thrown at start when configuration is missing or wrong; `problems` name each variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Reads `${CONFIG_DIR}/crm-sync.yaml` if present: a flat map of the same variable names. */
export function readConfigFile(configDir: string): Env {
  const file = path.join(configDir, 'crm-sync.yaml');
  if (!existsSync(file)) return {};
  let parsed: unknown;
  try {
    parsed = parseYaml(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError([`${file}: not valid YAML (${(err as Error).message.split('\n')[0]})`]);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError([`${file}: expected a map of VARIABLE: value`]);
  }
  const out: Env = {};
  for (const [k, v] of Object.entries(parsed as Record<string, unknown>)) {
    if (v === null || v === undefined) continue;
    if (typeof v === 'object') throw new ConfigError([`${file}: ${k}: expected a plain value`]);
    out[k] = String(v);
  }
  return out;
}

export interface LoadOptions {
  /** Which parts must be complete: the Service credentials, the CRM credentials. */
  require?: { service?: boolean; crm?: boolean };
}

/** Validates raw settings into an AppConfig, collecting every problem into one ConfigError. */
export function parseConfig(env: Env, options: LoadOptions = {}): AppConfig {
  const configDir = env.CONFIG_DIR?.trim() || './config';
  const merged: Env = { ...readConfigFile(configDir), ...env };
  const known = Object.keys(rawConfigSchema.shape);
  const picked: Env = {};
  for (const k of known) picked[k] = merged[k];

  const result = rawConfigSchema.safeParse(picked);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? 'config');
      const secret = (SECRET_KEYS as readonly string[]).includes(key);
      // Never echo a secret's value back in an error.
      const got = !secret && picked[key] !== undefined ? ` (got "${picked[key]}")` : '';
      return `${key}: ${issue.message}${got}`;
    });
    throw new ConfigError(problems);
  }
  const raw = result.data;
  const problems = [...requiredProblems(raw, options)];
  let limits: PlanLimits | undefined;
  try {
    limits = resolvePlan(raw.SERVICE_PLAN as PlanName, {
      ratePerMinute: raw.SERVICE_RATE_PER_MINUTE,
      burstPerSecond: raw.SERVICE_BURST_PER_SECOND,
      dailyCap: raw.SERVICE_DAILY_CAP === 'unlimited' ? null : raw.SERVICE_DAILY_CAP,
    });
  } catch (err) {
    problems.push(`SERVICE_PLAN: ${(err as Error).message}`);
  }
  if (limits && raw.SERVICE_LIVE_WINDOW_RESERVE >= limits.burstPerSecond) {
    problems.push(
      `SERVICE_LIVE_WINDOW_RESERVE: expected fewer than the burst limit (${limits.burstPerSecond}), got ${raw.SERVICE_LIVE_WINDOW_RESERVE}`,
    );
  }
  if (problems.length > 0 || !limits) throw new ConfigError(problems);

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
    },
    http: {
      port: raw.PORT,
      host: raw.HOST,
      maxBodyBytes: raw.WEBHOOK_MAX_BODY_BYTES,
      adminToken: raw.ADMIN_TOKEN,
    },
    pollSchedule: raw.POLL_SCHEDULE,
    logLevel: raw.LOG_LEVEL,
    configDir: raw.CONFIG_DIR,
  };
}

function* requiredProblems(raw: RawConfig, options: LoadOptions): Generator<string> {
  if (options.require?.service) {
    if (!raw.SERVICE_API_BASE_URL)
      yield 'SERVICE_API_BASE_URL: required (the Service API base URL, e.g. https://api.example.com)';
    if (!raw.SERVICE_API_KEY) yield 'SERVICE_API_KEY: required (the Service API key)';
    if (!raw.SERVICE_WEBHOOK_SECRET) yield 'SERVICE_WEBHOOK_SECRET: required (the webhook signing secret)';
  }
  if (!options.require?.crm) return;
  if (raw.CRM === 'hubspot') {
    const oauth = [raw.HUBSPOT_CLIENT_ID, raw.HUBSPOT_CLIENT_SECRET, raw.HUBSPOT_REFRESH_TOKEN];
    if (!raw.HUBSPOT_ACCESS_TOKEN && !oauth.every(Boolean)) {
      const missing = ['HUBSPOT_CLIENT_ID', 'HUBSPOT_CLIENT_SECRET', 'HUBSPOT_REFRESH_TOKEN'].filter(
        (_, i) => !oauth[i],
      );
      yield `HUBSPOT_ACCESS_TOKEN: required when CRM=hubspot, unless OAuth is set up (missing: ${missing.join(', ')})`;
    }
  } else {
    const refresh = [raw.SALESFORCE_CLIENT_ID, raw.SALESFORCE_CLIENT_SECRET, raw.SALESFORCE_REFRESH_TOKEN];
    const jwt = [raw.SALESFORCE_CLIENT_ID, raw.SALESFORCE_USERNAME, raw.SALESFORCE_JWT_PRIVATE_KEY];
    if (!raw.SALESFORCE_ACCESS_TOKEN && !refresh.every(Boolean) && !jwt.every(Boolean)) {
      yield 'SALESFORCE_ACCESS_TOKEN: required when CRM=salesforce, unless SALESFORCE_CLIENT_ID + SALESFORCE_CLIENT_SECRET + SALESFORCE_REFRESH_TOKEN (refresh flow) or SALESFORCE_CLIENT_ID + SALESFORCE_USERNAME + SALESFORCE_JWT_PRIVATE_KEY (JWT bearer flow) are set';
    }
    if (raw.SALESFORCE_ACCESS_TOKEN && !raw.SALESFORCE_INSTANCE_URL) {
      yield 'SALESFORCE_INSTANCE_URL: required with SALESFORCE_ACCESS_TOKEN (e.g. https://yourorg.my.salesforce.com)';
    }
  }
}

/** Loads configuration from the process environment (and the optional file). */
export function loadConfig(options: LoadOptions = {}, env: Env = process.env): AppConfig {
  return parseConfig(env, options);
}
