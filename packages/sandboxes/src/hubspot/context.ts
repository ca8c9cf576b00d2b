import type { Clock } from '../clock.js';
import type { CrmFaultInjector } from '../crmFaults.js';
import type { SandboxAuth } from './auth.js';
import { validationError } from './errors.js';
import type { Faults, RateLimits, RequestLog } from './limits.js';
import { isObjectType, type ObjectType } from './model.js';
import type { SeedRefs } from './seed.js';
import type { HubSpotStore } from './store.js';
import type { PrefixCounts } from './prefixCounts.js';

/** Everything the routes share: the portal's data, auth, limits, faults and the request log. */
export interface SandboxState {
  clock: Clock;
  store: HubSpotStore;
  auth: SandboxAuth;
  limits: RateLimits;
  faults: Faults;
  /** Random 429s and 5xx at configurable rates (chaos runs). */
  randomFaults: CrmFaultInjector;
  requests: RequestLog;
  /** Requests by path prefix, dated or legacy, over the sandbox's life (not reset). */
  prefixCounts: PrefixCounts;
  /** The scopes the credentials hold; undefined: every scope. */
  scopes: Set<string> | undefined;
  /** Whether numbered-version paths are served (else answered 410). */
  legacyPaths: boolean;
  /** Ids of the seeded records, for tests. */
  refs: SeedRefs;
  /**
   * Whether search responses carry X-HubSpot-RateLimit-* headers. Off by default: the headers
   * describe the ten-second limit, which "excludes the CRM Search API" (HubSpot API usage
   * guidelines), and search answers are reported without them (wire notes 1.4; a HubSpot community
   * reply, no vendor page says so outright).
   */
  searchRateLimitHeaders: boolean;
  /** Reseeds everything; without the crm-sync custom properties when asked. */
  reset(options?: { withCustomProperties?: boolean }): void;
}

export function objectType(raw: string): ObjectType {
  if (!isObjectType(raw)) throw validationError(`Unable to infer object type from: ${raw}`);
  return raw;
}

/** Query lists arrive repeated (`properties=a&properties=b`) or comma-separated. */
export function queryList(value: unknown): string[] {
  const items = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return items.flatMap((v) => String(v).split(',')).filter((v) => v !== '');
}

export function nowIso(state: SandboxState): string {
  return new Date(state.clock.now()).toISOString();
}

/** The envelope HubSpot wraps batch results in. */
export function batchEnvelope(state: SandboxState, results: unknown[], errors: unknown[]) {
  const at = nowIso(state);
  return {
    status: 'COMPLETE',
    results,
    ...(errors.length > 0 ? { errors, numErrors: errors.length } : {}),
    requestedAt: at,
    startedAt: at,
    completedAt: at,
  };
}

/** "You can retrieve up to 100 contacts in one request" (HubSpot CRM contacts guide, batch read). */
export const MAX_BATCH_INPUTS = 100;

export function checkBatchSize(inputs: unknown): unknown[] {
  if (!Array.isArray(inputs)) throw validationError('inputs must be an array');
  if (inputs.length > MAX_BATCH_INPUTS) {
    throw validationError(`Batch input is limited to ${MAX_BATCH_INPUTS} inputs; got ${inputs.length}.`);
  }
  return inputs;
}
