/**
 * Whether, and after how long, a failed Service request is tried again. Pure: the caller supplies
 * the attempt number and the randomness, and does the waiting.
 */
import { serviceDidNotAct, ServiceRateLimitedError, ServiceTransientError } from './errors.js';

/**
 * Transient failures (5xx, timeout, connection): full jitter between a 500 ms floor and an
 * exponential cap of 1 s x 2^(attempt-1), the cap never above 30 s. Attempt 1 waits 0.5-1 s,
 * attempt 2 0.5-2 s, attempt 3 0.5-4 s, ... attempt 6 and later 0.5-30 s.
 */
export const TRANSIENT_BACKOFF = { floorMs: 500, firstCapMs: 1_000, factor: 2, ceilingMs: 30_000 } as const;

/**
 * 429 without a usable Retry-After: 1 s x 2^(attempt-1), at most 60 s (the rate window). No
 * jitter: the whole budget gate pauses for it, so callers do not stampede.
 */
export const RATE_LIMIT_BACKOFF = { startMs: 1_000, factor: 2, ceilingMs: 60_000 } as const;

/** A wait longer than this is not done in process: the error goes to the caller to reschedule. */
export const MAX_IN_PROCESS_WAIT_MS = 60_000;

export type RetryReason =
  'transient' | 'rate_limited' | 'not_retryable' | 'not_idempotent' | 'attempts_exhausted' | 'wait_too_long';

export interface RetryDecision {
  retry: boolean;
  reason: RetryReason;
  /** How long to wait before the next attempt; 0 when not retrying. */
  waitMs: number;
}

export interface RetryOptions {
  /** Attempts allowed in all, the first included. */
  maxAttempts: number;
  /** Uniform in [0, 1). */
  random: () => number;
  /**
   * False for requests that must not run twice (follow-up generation creates new drafts): then
   * only failures where the Service surely did nothing are retried (serviceDidNotAct: 429, 503,
   * connection refused or broken before sending). Default true.
   */
  idempotent?: boolean;
}

export function transientBackoffMs(attempt: number, random: () => number): number {
  const { floorMs, firstCapMs, factor, ceilingMs } = TRANSIENT_BACKOFF;
  const cap = Math.min(ceilingMs, firstCapMs * factor ** Math.max(0, attempt - 1));
  const r = Math.min(Math.max(random(), 0), 1);
  return floorMs + Math.floor(r * (cap - floorMs));
}

/** How long a 429 says to wait: its Retry-After, or exponential from 1 s when there is none. */
export function rateLimitWaitMs(error: ServiceRateLimitedError, attempt: number): number {
  if (error.retryAfterMs !== undefined) return error.retryAfterMs;
  const { startMs, factor, ceilingMs } = RATE_LIMIT_BACKOFF;
  return Math.min(ceilingMs, startMs * factor ** Math.max(0, attempt - 1));
}

/**
 * `attempt` is the number of attempts made so far (1 after the first failure).
 * Never retried: 400/422, 401, 403, 404, not ready, daily cap, bad response, and anything that
 * is not a ServiceError (an abort, a budget refusal, a bug).
 */
export function decideRetry(error: unknown, attempt: number, options: RetryOptions): RetryDecision {
  let waitMs: number;
  let reason: RetryReason;
  if (error instanceof ServiceTransientError) {
    if (options.idempotent === false && !serviceDidNotAct(error)) {
      return { retry: false, reason: 'not_idempotent', waitMs: 0 };
    }
    reason = 'transient';
    waitMs = transientBackoffMs(attempt, options.random);
  } else if (error instanceof ServiceRateLimitedError) {
    reason = 'rate_limited';
    waitMs = rateLimitWaitMs(error, attempt);
  } else {
    return { retry: false, reason: 'not_retryable', waitMs: 0 };
  }
  if (attempt >= options.maxAttempts) return { retry: false, reason: 'attempts_exhausted', waitMs: 0 };
  if (waitMs > MAX_IN_PROCESS_WAIT_MS) return { retry: false, reason: 'wait_too_long', waitMs: 0 };
  return { retry: true, reason, waitMs };
}
