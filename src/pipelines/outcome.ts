/**
 * What a failed job try means for the job, decided by the error's class (pure):
 * - retry: count the try and back off (transient trouble);
 * - wait: put the job back without counting the try (a rate limit, a spent daily cap);
 * - fail: give up now and record why (the data or the setup is wrong; retrying cannot help);
 * - stop: credentials are bad; fail the job and tell the operator.
 */
import { BudgetClosedError } from '../budget/errors.js';
import { DailyCapReachedError } from '../budget/types.js';
import { CrmAuthError, CrmDailyLimitError, CrmError, CrmRateLimitedError } from '../crm/errors.js';
import { MappingError, MappingEvaluationError, MappingRequiredMissingError } from '../mapping/errors.js';
import {
  ServiceDailyCapError,
  ServiceError,
  ServiceRateLimitedError,
  ServiceTransientError,
  ServiceUnauthorizedError,
} from '../service/errors.js';

export type JobOutcome =
  | { kind: 'retry'; code: string; message: string; delayMs?: number | undefined }
  | { kind: 'wait'; code: string; message: string; delayMs: number }
  | { kind: 'fail'; code: string; message: string }
  | { kind: 'stop'; code: string; message: string };

const MAX_WAIT_MS = 6 * 3_600_000;

export function outcomeOf(err: unknown, nowMs: number): JobOutcome {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof BudgetClosedError) return { kind: 'wait', code: err.code, message, delayMs: 0 };
  if (err instanceof DailyCapReachedError || err instanceof ServiceDailyCapError) {
    const resetsAt = err.resetsAt;
    return { kind: 'wait', code: err.code, message, delayMs: clampWait(resetsAt - nowMs) };
  }
  if (err instanceof ServiceUnauthorizedError || err instanceof CrmAuthError) {
    return { kind: 'stop', code: err.code, message };
  }
  if (err instanceof ServiceRateLimitedError) {
    return { kind: 'wait', code: err.code, message, delayMs: clampWait(err.retryAfterMs ?? 5_000) };
  }
  if (err instanceof CrmRateLimitedError || err instanceof CrmDailyLimitError) {
    return { kind: 'wait', code: err.code, message, delayMs: clampWait(err.retryAfterMs) };
  }
  if (err instanceof ServiceTransientError) return { kind: 'retry', code: err.code, message };
  if (err instanceof ServiceError) return { kind: 'fail', code: err.code, message };
  if (err instanceof CrmError) {
    return err.retryable
      ? { kind: 'retry', code: err.code, message }
      : { kind: 'fail', code: err.code, message };
  }
  if (
    err instanceof MappingRequiredMissingError ||
    err instanceof MappingEvaluationError ||
    err instanceof MappingError
  ) {
    return { kind: 'fail', code: err.code, message };
  }
  // Unknown errors are bugs or infrastructure trouble (database): retry, bounded by max attempts.
  return { kind: 'retry', code: 'INTERNAL', message };
}

function clampWait(ms: number): number {
  return Math.min(MAX_WAIT_MS, Math.max(250, Math.ceil(ms)));
}
