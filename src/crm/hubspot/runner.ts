import type { Logger } from 'pino';
import { sleep, type Clock } from '../../util/clock.js';
import { CrmDailyLimitError, CrmRateLimitedError } from '../errors.js';
import type { TokenSource } from './auth.js';
import { HubSpotSearchLimitError, toCrmError } from './errorMap.js';
import type { Lane, RequestGate } from './gate.js';
import { decideRetry, type RetryPolicy } from './retry.js';
import type { HubSpotApi } from './sdk.js';

/**
 * Runs one HubSpot request: a valid token, a slot from the gate, the request, and on failure the
 * retry decision (refresh once on 401, wait out a 429, back off on 5xx). Throws a CrmError.
 */
export type Runner = <T>(label: string, fn: (api: HubSpotApi) => Promise<T>) => Promise<T>;

export interface RunnerDeps {
  clock: Clock;
  logger: Logger;
  gate: RequestGate;
  tokens: TokenSource;
  /** A HubSpotApi bound to this token. */
  apiFor: (token: string) => HubSpotApi;
  policy: RetryPolicy;
  random: () => number;
}

export function createRunner(deps: RunnerDeps): Runner {
  const { clock, gate, tokens } = deps;
  let cached: { token: string; api: HubSpotApi } | undefined;
  const apiFor = (token: string) => {
    if (cached?.token !== token) cached = { token, api: deps.apiFor(token) };
    return cached.api;
  };

  return async function run<T>(label: string, fn: (api: HubSpotApi) => Promise<T>): Promise<T> {
    let attempt = 0;
    let refreshed = false;
    for (;;) {
      attempt += 1;
      const token = await tokens.current();
      const sent: { lane: Lane } = { lane: 'general' };
      try {
        return await fn(gatedApi(apiFor(token), gate, (lane) => (sent.lane = lane)));
      } catch (e) {
        const err = toCrmError(e, clock.now());
        // A search-limit 429 holds the searches of this process; any other 429 holds every request.
        if (err instanceof HubSpotSearchLimitError && sent.lane === 'search')
          gate.pauseSearchesUntil(clock.now() + err.retryAfterMs);
        else if (err instanceof CrmRateLimitedError) gate.pauseUntil(clock.now() + err.retryAfterMs);
        if (err instanceof CrmDailyLimitError) gate.blockDailyUntil(clock.now() + err.retryAfterMs);
        const decision = decideRetry(
          err,
          { attempt, canRefresh: tokens.canRefresh, refreshed },
          deps.policy,
          deps.random,
        );
        if (!decision.retry) throw err;
        deps.logger.debug(
          { crm: 'hubspot', label, attempt, reason: decision.reason, waitMs: decision.waitMs },
          'retrying',
        );
        if (decision.refreshAuth) {
          refreshed = true;
          attempt -= 1; // the refresh is not a failed attempt of the request itself
          await tokens.refresh(token);
          continue;
        }
        await sleep(clock, decision.waitMs);
      }
    }
  };
}

/**
 * `api` with each method going through the gate, in the lane of the limit it counts against:
 * `search` (POST /crm/objects/{version}/{type}/search) in the search lane, everything else in the
 * general one. Each method is one HTTP request; `onLane` is told the lane of the request made.
 */
export function gatedApi(api: HubSpotApi, gate: RequestGate, onLane: (lane: Lane) => void): HubSpotApi {
  const gated: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(api) as [string, (...args: unknown[]) => Promise<unknown>][]) {
    const lane: Lane = name === 'search' ? 'search' : 'general';
    gated[name] = (...args: unknown[]) => {
      onLane(lane);
      return gate.run(() => method.apply(api, args), lane);
    };
  }
  return gated as unknown as HubSpotApi;
}
