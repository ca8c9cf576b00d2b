import { isIP } from 'node:net';
import { validateDetailed } from 'node-cron';
import { z } from 'zod';
import { PLAN_NAMES } from '../budget/plans.js';
import { DEFAULT_API_VERSION } from '../crm/salesforce/apiVersions.js';
import { DEFAULT_HUBSPOT_API_VERSION, isHubSpotApiVersion } from '../crm/hubspot/paths.js';
import { CREDENTIALS_KEY_FORMAT, parseCredentialsKey } from '../util/secretBox.js';
import { DEFAULT_DRIFT_THRESHOLDS as DRIFT } from './drift.js';

/**
 * Every setting crm-sync reads, by its environment-variable name. The same names are accepted as
 * keys of the optional file `${CONFIG_DIR}/crm-sync.yaml`; the environment wins over the file.
 */
const optionalText = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional();

const url = z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' });
const optionalUrl = optionalText.pipe(url.optional());

const positiveInt = z.coerce
  .number<string>({ error: 'expected a whole number' })
  .int('expected a whole number')
  .positive('expected a number above 0');
const optionalPositiveInt = optionalText.pipe(positiveInt.optional());

/** Minutes for a drift threshold; 0 turns that check off. */
const driftMinutes = (fallback: number) =>
  optionalText.pipe(
    z.coerce
      .number<string>({ error: 'expected a whole number of minutes (0 = off)' })
      .int('expected a whole number of minutes (0 = off)')
      .min(0, 'expected a whole number of minutes (0 = off)')
      .default(fallback),
  );

/** An IP address or an RFC 1123 host name (what `listen` accepts), checked before the worker binds. */
const hostName = z
  .string()
  .refine(
    (v) =>
      isIP(v) !== 0 ||
      /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(v),
    'expected an IP address or host name to listen on, such as 0.0.0.0, :: or 127.0.0.1',
  );

/** A node-cron schedule (5 fields, or 6 with seconds first); the message says which field is wrong. */
const cronSchedule = z.string().superRefine((v, ctx) => {
  const result = validateDetailed(v);
  if (result.valid) return;
  const reason = result.errors.map((e) => e.message).join('; ');
  ctx.addIssue({
    code: 'custom',
    message: `expected a cron schedule such as "*/30 * * * * *" (every 30 s): ${reason}`,
  });
});

export const SECRET_KEYS = [
  'SERVICE_API_KEY',
  'SERVICE_WEBHOOK_SECRET',
  'SERVICE_WEBHOOK_SECRET_PREVIOUS',
  'HUBSPOT_ACCESS_TOKEN',
  'HUBSPOT_CLIENT_SECRET',
  'HUBSPOT_REFRESH_TOKEN',
  'SALESFORCE_ACCESS_TOKEN',
  'SALESFORCE_CLIENT_SECRET',
  'SALESFORCE_REFRESH_TOKEN',
  'SALESFORCE_JWT_PRIVATE_KEY',
  'CREDENTIALS_KEY',
  // May carry a password.
  'DATABASE_URL',
  'ADMIN_TOKEN',
] as const;

export const rawConfigSchema = z.object({
  SERVICE_API_BASE_URL: optionalUrl,
  SERVICE_API_KEY: optionalText,
  SERVICE_WEBHOOK_SECRET: optionalText,
  SERVICE_WEBHOOK_SECRET_PREVIOUS: optionalText,
  SERVICE_PLAN: optionalText.pipe(
    z
      .enum(PLAN_NAMES as [string, ...string[]], { error: `expected one of ${PLAN_NAMES.join(' | ')}` })
      .default('sales'),
  ),
  SERVICE_RATE_PER_MINUTE: optionalPositiveInt,
  SERVICE_BURST_PER_SECOND: optionalPositiveInt,
  SERVICE_DAILY_CAP: optionalText.pipe(
    z
      .union([z.literal('unlimited'), positiveInt], {
        error: 'expected a whole number above 0 or "unlimited"',
      })
      .optional(),
  ),
  SERVICE_LIVE_DAILY_RESERVE: optionalText.pipe(
    z.coerce
      .number<string>({ error: 'expected a fraction between 0 and 0.9' })
      .min(0, 'expected a fraction between 0 and 0.9')
      .max(0.9, 'expected a fraction between 0 and 0.9')
      .default(0.1),
  ),
  SERVICE_LIVE_WINDOW_RESERVE: optionalText.pipe(
    z.coerce
      .number<string>({ error: 'expected a whole number' })
      .int('expected a whole number')
      .min(0, 'expected 0 or more')
      .default(1),
  ),
  SERVICE_REQUEST_TIMEOUT_MS: optionalText.pipe(positiveInt.default(15_000)),
  DATABASE_URL: optionalText.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'expected a postgres:// or postgresql:// URL')
      .optional(),
  ),
  DATA_DIR: optionalText.pipe(z.string().default('./data')),
  // "HubSpot", as the vendor writes it, is accepted too.
  CRM: optionalText
    .transform((v) => v?.toLowerCase())
    .pipe(z.enum(['hubspot', 'salesforce'], { error: 'expected hubspot | salesforce' }).default('hubspot')),
  HUBSPOT_BASE_URL: optionalText.pipe(url.default('https://api.hubapi.com')),
  /** HubSpot's date-versioned API the worker calls (src/crm/hubspot/paths.ts). */
  HUBSPOT_API_VERSION: optionalText.pipe(
    z
      .string()
      .refine(
        isHubSpotApiVersion,
        'expected a HubSpot date version (2026-03, 2026-09, ...: March or September)',
      )
      .default(DEFAULT_HUBSPOT_API_VERSION),
  ),
  HUBSPOT_ACCESS_TOKEN: optionalText,
  HUBSPOT_CLIENT_ID: optionalText,
  HUBSPOT_CLIENT_SECRET: optionalText,
  HUBSPOT_REFRESH_TOKEN: optionalText,
  SALESFORCE_INSTANCE_URL: optionalUrl,
  SALESFORCE_LOGIN_URL: optionalText.pipe(url.default('https://login.salesforce.com')),
  SALESFORCE_ACCESS_TOKEN: optionalText,
  SALESFORCE_CLIENT_ID: optionalText,
  SALESFORCE_CLIENT_SECRET: optionalText,
  SALESFORCE_REFRESH_TOKEN: optionalText,
  SALESFORCE_USERNAME: optionalText,
  SALESFORCE_JWT_PRIVATE_KEY: optionalText,
  SALESFORCE_API_VERSION: optionalText.pipe(
    z
      .string()
      .regex(/^\d+\.0$/, `expected a version like ${DEFAULT_API_VERSION}`)
      .default(DEFAULT_API_VERSION),
  ),
  /**
   * Seals refresh tokens the CRM rotates, stored in the database for every process (AES-256-GCM;
   * src/util/secretBox.ts). Optional: without it a rotated token stays with the process that got it.
   */
  CREDENTIALS_KEY: optionalText.pipe(
    z
      .string()
      .refine((v) => parseCredentialsKey(v) !== undefined, CREDENTIALS_KEY_FORMAT)
      .optional(),
  ),
  /** How long to hold Salesforce requests after REQUEST_LIMIT_EXCEEDED (the daily allowance). */
  SALESFORCE_LIMIT_PAUSE_MS: optionalText.pipe(positiveInt.default(900_000)),
  PORT: optionalText.pipe(
    z.coerce
      .number<string>({ error: 'expected a port number' })
      .int('expected a port number')
      .min(0, 'expected a port number')
      .max(65535, 'expected a port number')
      .default(8080),
  ),
  HOST: optionalText.pipe(hostName.default('0.0.0.0')),
  /** Guards the console, /status and /admin/*; without it they answer loopback requests only. */
  ADMIN_TOKEN: optionalText.pipe(z.string().min(16, 'expected at least 16 characters').optional()),
  /**
   * The address admins open the console at (e.g. https://crm-sync.example.com). With ADMIN_TOKEN,
   * console requests must carry this host and same-site posts this origin.
   */
  PUBLIC_URL: optionalText.pipe(
    z
      .url({ protocol: /^https?$/, error: 'expected an http(s) URL' })
      .refine(
        (v) => ['', '/'].includes(new URL(v).pathname),
        'expected an origin only, such as https://crm-sync.example.com',
      )
      .optional(),
  ),
  /** A proxy in front of the worker sets X-Forwarded-Proto: trusted only when this is true. */
  TRUST_PROXY: optionalText.pipe(
    z
      .enum(['true', 'false'], { error: 'expected true or false' })
      .default('false')
      .transform((v) => v === 'true'),
  ),
  /** HubSpot account (portal) id, for links from the console to HubSpot records. */
  HUBSPOT_PORTAL_ID: optionalText.pipe(
    z.string().regex(/^\d+$/, 'expected the numeric HubSpot account id').optional(),
  ),
  WEBHOOK_MAX_BODY_BYTES: optionalText.pipe(positiveInt.default(1_048_576)),
  POLL_SCHEDULE: optionalText.pipe(cronSchedule.default('*/30 * * * * *')),
  LOG_LEVEL: optionalText.pipe(
    z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
        error: 'expected fatal | error | warn | info | debug | trace | silent',
      })
      .default('info'),
  ),
  CONFIG_DIR: optionalText.pipe(z.string().default('./config')),
  // Silence and drift warnings (thresholds: drift.ts, detectors: src/drift/detectors.ts; docs/operations.md "Silence and drift").
  /** No verified webhook for this long while polling finds new calls: warn. */
  WEBHOOK_SILENCE_MINUTES: driftMinutes(DRIFT.webhookSilenceMs / 60_000),
  /** A call completed this long ago without analysis.ready: warn (the Service is behind). */
  ANALYSIS_LAG_MINUTES: driftMinutes(DRIFT.analysisLagMs / 60_000),
  /** The recent span whose share of calls with no CRM match is compared with the week before. */
  NO_MATCH_WINDOW_MINUTES: optionalText.pipe(positiveInt.default(DRIFT.noMatchWindowMs / 60_000)),
  /** Warn when that share exceeds the week's by this much (0..1; 0 = off). */
  NO_MATCH_RISE: optionalText.pipe(
    z.coerce
      .number<string>({ error: 'expected a fraction between 0 and 1' })
      .min(0, 'expected a fraction between 0 and 1')
      .max(1, 'expected a fraction between 0 and 1')
      .default(DRIFT.noMatchRise),
  ),
  /** Calls needed in the recent span and in the week before for the comparison. */
  NO_MATCH_MIN_CALLS: optionalText.pipe(positiveInt.default(DRIFT.noMatchMinCalls)),
});

export type RawConfig = z.output<typeof rawConfigSchema>;
