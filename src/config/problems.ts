import { PLAN_PRESETS, type PlanLimits, type PlanName } from '../budget/plans.js';
import { clientCredentialsLoginProblem, selectAuthMode } from '../crm/salesforce/authMode.js';
import type { RawConfig } from './schema.js';

/**
 * The configuration checks that look at several settings at once, written as pure functions that
 * return problem lines ("VARIABLE: what is wrong"), so `parseConfig` can report them all together.
 */

/** Settings that must be present for the parts a command needs. */
export function* requiredProblems(
  raw: Partial<RawConfig>,
  need: { service?: boolean | undefined; crm?: boolean | undefined },
): Generator<string> {
  if (need.service) {
    if (!raw.SERVICE_API_BASE_URL)
      yield 'SERVICE_API_BASE_URL: required (the Service API base URL, e.g. https://api.example.com)';
    if (!raw.SERVICE_API_KEY) yield 'SERVICE_API_KEY: required (the Service API key)';
    if (!raw.SERVICE_WEBHOOK_SECRET) yield 'SERVICE_WEBHOOK_SECRET: required (the webhook signing secret)';
  }
  if (!need.crm) return;
  if (raw.CRM === 'hubspot') {
    const oauth = [raw.HUBSPOT_CLIENT_ID, raw.HUBSPOT_CLIENT_SECRET, raw.HUBSPOT_REFRESH_TOKEN];
    if (!raw.HUBSPOT_ACCESS_TOKEN && !oauth.every(Boolean)) {
      const missing = ['HUBSPOT_CLIENT_ID', 'HUBSPOT_CLIENT_SECRET', 'HUBSPOT_REFRESH_TOKEN'].filter(
        (_, i) => !oauth[i],
      );
      yield `HUBSPOT_ACCESS_TOKEN: required when CRM=hubspot, unless OAuth is set up (missing: ${missing.join(', ')})`;
    }
  } else if (raw.CRM === 'salesforce') {
    const mode = selectAuthMode({
      accessToken: raw.SALESFORCE_ACCESS_TOKEN,
      instanceUrl: raw.SALESFORCE_INSTANCE_URL,
      clientId: raw.SALESFORCE_CLIENT_ID,
      clientSecret: raw.SALESFORCE_CLIENT_SECRET,
      refreshToken: raw.SALESFORCE_REFRESH_TOKEN,
      username: raw.SALESFORCE_USERNAME,
      jwtPrivateKey: raw.SALESFORCE_JWT_PRIVATE_KEY,
    });
    if (!mode && !raw.SALESFORCE_ACCESS_TOKEN) {
      yield 'SALESFORCE_ACCESS_TOKEN: required when CRM=salesforce, unless SALESFORCE_CLIENT_ID + SALESFORCE_CLIENT_SECRET (client credentials flow, with SALESFORCE_LOGIN_URL set to your My Domain), SALESFORCE_CLIENT_ID + SALESFORCE_USERNAME + SALESFORCE_JWT_PRIVATE_KEY (JWT bearer flow) or SALESFORCE_CLIENT_ID + SALESFORCE_CLIENT_SECRET + SALESFORCE_REFRESH_TOKEN (refresh-token flow) are set';
    }
    if (!mode && raw.SALESFORCE_ACCESS_TOKEN) {
      yield 'SALESFORCE_INSTANCE_URL: required with SALESFORCE_ACCESS_TOKEN (e.g. https://yourorg.my.salesforce.com)';
    }
    if (mode === 'client_credentials' && raw.SALESFORCE_LOGIN_URL) {
      const problem = clientCredentialsLoginProblem(raw.SALESFORCE_LOGIN_URL);
      if (problem) yield problem;
    }
  }
}

/** Keys of the config file that crm-sync does not know, each with the closest known name. */
export function unknownKeyProblems(file: string, keys: string[], known: readonly string[]): string[] {
  return keys
    .filter((key) => !known.includes(key))
    .map((key) => {
      const near = closestName(key, known);
      return `${file}: unknown key ${key}${near ? ` (did you mean ${near}?)` : ''}`;
    });
}

/**
 * The known name nearest to `name` by edit distance (case-insensitive), or undefined when even the
 * nearest differs in more than a third of its letters: then it is not a typo but something else.
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(name.toUpperCase(), candidate);
    if (!best || distance < best.distance) best = { name: candidate, distance };
  }
  return best && best.distance <= Math.max(2, Math.ceil(best.name.length / 3)) ? best.name : undefined;
}

/** Levenshtein distance: insertions, deletions and substitutions each cost 1. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}

const LIMIT_VARIABLES: Record<keyof PlanLimits, string> = {
  ratePerMinute: 'SERVICE_RATE_PER_MINUTE',
  burstPerSecond: 'SERVICE_BURST_PER_SECOND',
  dailyCap: 'SERVICE_DAILY_CAP',
};

/**
 * Limits set above the plan's published numbers (service-api-spec.md section 8). Allowed, since a
 * contract may grant more, but the Service would answer the excess with 429s, so `start` warns.
 */
export function limitWarnings(plan: PlanName, limits: PlanLimits): string[] {
  if (plan === 'enterprise') return [];
  const published = PLAN_PRESETS[plan];
  const warnings: string[] = [];
  for (const key of Object.keys(LIMIT_VARIABLES) as (keyof PlanLimits)[]) {
    const set = limits[key];
    const max = published[key];
    if (max === null) continue;
    if (set === null || set > max) {
      warnings.push(
        `${LIMIT_VARIABLES[key]}=${set ?? 'unlimited'} is above the ${plan} plan's published ${max}: the Service will answer the excess with 429 (set SERVICE_PLAN if your plan is larger)`,
      );
    }
  }
  return warnings;
}
