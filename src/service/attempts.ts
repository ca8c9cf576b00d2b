/**
 * The attempt loop around one Service operation: the 401 stop, budget pauses on 429, retry
 * decisions (retry.ts) and the waits between attempts on the injected clock.
 */
import type { RequestBudget } from '../budget/types.js';
import type { Logger } from '../log/logger.js';
import { sleep, type Clock } from '../util/clock.js';
import {
  ServiceDailyCapError,
  ServiceError,
  ServiceRateLimitedError,
  ServiceUnauthorizedError,
} from './errors.js';
import { decideRetry, rateLimitWaitMs } from './retry.js';
import type { AttemptInfo } from './types.js';

/**
 * Thrown instead of sending when a request could not leave soon enough after its budget slot was
 * granted (a slow database round trip in FollowupOptions.aroundSend): nothing was sent, so the
 * Service surely did nothing. Not a ServiceError: the attempt loop takes a fresh slot at once.
 */
export class SlotLapsedError extends Error {
  readonly code = 'SLOT_LAPSED';
  constructor(label: string, lateMs: number) {
    super(`${label} not sent: it was ready ${lateMs} ms after its budget slot was granted`);
    this.name = 'SlotLapsedError';
  }
}

/** Shared by every call of one client: after a 401 nothing is sent until `resetAuth()`. */
export interface AuthState {
  unauthorized: boolean;
  lastError?: string | undefined;
}

export interface AttemptLoopDeps {
  budget: RequestBudget;
  clock: Clock;
  logger: Logger;
  random: () => number;
  maxAttempts: number;
  auth: AuthState;
  onAttempt?: ((info: AttemptInfo) => void) | undefined;
}

export interface Operation {
  method: string;
  /** Concrete path, for messages. */
  path: string;
  /** Low-cardinality name for logs and budget metrics, e.g. `GET /v1/calls/:id`. */
  label: string;
  signal?: AbortSignal | undefined;
  idempotent?: boolean | undefined;
}

/**
 * Runs `attempt` until it succeeds or the retry decision says stop. `attempt` must pay for each
 * Service request it makes through the budget (budget.run), so retries are paid too.
 */
export async function runWithRetries<T>(
  deps: AttemptLoopDeps,
  op: Operation,
  attempt: () => Promise<T>,
): Promise<T> {
  let lapsed = 0;
  for (let n = 1; ; n++) {
    if (deps.auth.unauthorized) {
      throw new ServiceUnauthorizedError(
        `${op.method} ${op.path} not sent: the Service API key was rejected (401) earlier; replace SERVICE_API_KEY`,
        { method: op.method, path: op.path },
      );
    }
    const started = deps.clock.now();
    try {
      const value = await attempt();
      deps.auth.lastError = undefined;
      deps.onAttempt?.({ endpoint: op.label, status: '2xx', durationMs: deps.clock.now() - started });
      return value;
    } catch (err) {
      // Not a Service attempt: no backoff, no failure counted; bounded so a stalled database
      // cannot spend slots forever (the caller then sees the error and its job retries).
      if (err instanceof SlotLapsedError && ++lapsed < deps.maxAttempts) {
        deps.logger.debug(
          { endpoint: op.label, lapsed },
          'budget slot lapsed before sending; taking a new one',
        );
        n--;
        continue;
      }
      deps.onAttempt?.({ endpoint: op.label, status: statusOf(err), durationMs: deps.clock.now() - started });
      onFailure(deps, op, err, n);
      const decision = decideRetry(err, n, {
        maxAttempts: deps.maxAttempts,
        random: deps.random,
        idempotent: op.idempotent,
      });
      if (!decision.retry) {
        if (err instanceof ServiceError) deps.auth.lastError = `${err.code}: ${err.message}`;
        throw err;
      }
      deps.logger.debug(
        {
          endpoint: op.label,
          attempt: n,
          reason: decision.reason,
          waitMs: decision.waitMs,
          code: codeOf(err),
        },
        'retrying Service request',
      );
      await sleep(deps.clock, decision.waitMs, op.signal);
    }
  }
}

/** Side effects of a failure that hold whether or not the request is retried. */
function onFailure(deps: AttemptLoopDeps, op: Operation, err: unknown, attempt: number): void {
  if (err instanceof ServiceUnauthorizedError) {
    if (!deps.auth.unauthorized) {
      deps.auth.unauthorized = true;
      deps.logger.error(
        { code: err.code, endpoint: op.label },
        'The Service rejected the API key (401): it is invalid or was rotated. No further Service requests ' +
          'will be made until SERVICE_API_KEY is replaced.',
      );
    }
  } else if (err instanceof ServiceRateLimitedError) {
    // Pause the whole gate, not just this request, before any retry.
    deps.budget.pauseFor(rateLimitWaitMs(err, attempt), 'rate');
  } else if (err instanceof ServiceDailyCapError) {
    const ms = Math.max(0, err.resetsAt - deps.clock.now());
    deps.budget.pauseFor(ms, 'daily');
    deps.logger.warn(
      { code: err.code, endpoint: op.label, resetsAt: new Date(err.resetsAt).toISOString() },
      'The Service daily request cap is spent; Service requests are paused until it resets',
    );
  }
}

function statusOf(err: unknown): string {
  if (err instanceof ServiceError)
    return err.status !== undefined ? String(err.status) : err.code.toLowerCase();
  return 'error';
}

function codeOf(err: unknown): string | undefined {
  return err instanceof ServiceError ? err.code : undefined;
}
