import { CrmAuthError, CrmRateLimitedError, CrmTransientError, type CrmError } from '../errors.js';

/**
 * Whether to try a HubSpot request again, and after how long (pure). The SDK's own retries are
 * off (its decorators are a process-wide singleton and ignore the rate-limit headers), so this is
 * the only retry policy:
 * - 401 with OAuth: refresh the token once, retry at once.
 * - 429 (ten-second window): wait what HubSpot says, if that fits `maxWaitMs`; else give the
 *   CrmRateLimitedError to the caller, who reschedules.
 * - 5xx / network: exponential backoff from `baseDelayMs`, ±20 % jitter, floor 50 ms, ceiling
 *   `maxDelayMs`.
 * - Anything else (rejected, not found, daily limit): no retry.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included (default 4). */
  maxAttempts: number;
  /** Longest wait for a 429 spent in-process (default 15 s). */
  maxWaitMs: number;
  /** First backoff for transient errors (default 250 ms). */
  baseDelayMs: number;
  /** Backoff ceiling (default 5 s). */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 4,
  maxWaitMs: 15_000,
  baseDelayMs: 250,
  maxDelayMs: 5_000,
};

export interface RetryState {
  /** Attempts made so far (1 after the first). */
  attempt: number;
  /** OAuth is configured, so a refresh may help a 401. */
  canRefresh: boolean;
  /** A refresh was already tried for this request. */
  refreshed: boolean;
}

export type RetryDecision =
  { retry: false; reason: string } | { retry: true; reason: string; waitMs: number; refreshAuth: boolean };

export function decideRetry(
  err: CrmError,
  state: RetryState,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  random: () => number = Math.random,
): RetryDecision {
  if (err instanceof CrmAuthError) {
    if (state.canRefresh && !state.refreshed) {
      return { retry: true, reason: 'unauthorized: refresh the token once', waitMs: 0, refreshAuth: true };
    }
    return { retry: false, reason: 'unauthorized' };
  }
  if (state.attempt >= policy.maxAttempts)
    return { retry: false, reason: `gave up after ${state.attempt} attempts` };
  if (err instanceof CrmRateLimitedError) {
    if (err.retryAfterMs > policy.maxWaitMs)
      return { retry: false, reason: 'rate limited for longer than maxWaitMs' };
    return { retry: true, reason: 'rate limited', waitMs: err.retryAfterMs, refreshAuth: false };
  }
  if (err instanceof CrmTransientError) {
    const raw = policy.baseDelayMs * 2 ** (state.attempt - 1);
    const jittered = raw * (0.8 + 0.4 * random());
    const waitMs = Math.round(Math.min(policy.maxDelayMs, Math.max(50, jittered)));
    return { retry: true, reason: 'transient', waitMs, refreshAuth: false };
  }
  return { retry: false, reason: err.code };
}
