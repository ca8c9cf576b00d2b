/**
 * What the Service said, as one class per outcome, so callers branch on the class: fail now
 * (bad request, forbidden, not found, bad response), wait (not ready, rate limited, daily cap),
 * retry (transient), or stop calling (unauthorized). The `code`s are stable and documented;
 * an operator can search logs for them. Messages never contain the API key.
 */
export type ServiceErrorCode =
  | 'SERVICE_BAD_REQUEST'
  | 'SERVICE_UNAUTHORIZED'
  | 'SERVICE_FORBIDDEN'
  | 'SERVICE_NOT_FOUND'
  | 'SERVICE_NOT_READY'
  | 'SERVICE_RATE_LIMITED'
  | 'SERVICE_DAILY_CAP'
  | 'SERVICE_TRANSIENT'
  | 'SERVICE_BAD_RESPONSE';

/** Where an error happened; `serviceCode` is the `error.code` of the Service's JSON body, if any. */
export interface ServiceErrorContext {
  method: string;
  path: string;
  status?: number | undefined;
  serviceCode?: string | undefined;
}

export abstract class ServiceError extends Error {
  abstract readonly code: ServiceErrorCode;
  readonly method: string;
  readonly path: string;
  readonly status: number | undefined;
  readonly serviceCode: string | undefined;

  constructor(message: string, context: ServiceErrorContext, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.method = context.method;
    this.path = context.path;
    this.status = context.status;
    this.serviceCode = context.serviceCode;
  }
}

/** 400/422, or a request refused before sending (e.g. context body too large): do not retry. */
export class ServiceBadRequestError extends ServiceError {
  readonly code = 'SERVICE_BAD_REQUEST';
}

/** 401: the key is invalid or rotated. The client stops calling until `resetAuth()`. */
export class ServiceUnauthorizedError extends ServiceError {
  readonly code = 'SERVICE_UNAUTHORIZED';
}

/** 403: the key's workspace scope does not allow this; record it for this call. */
export class ServiceForbiddenError extends ServiceError {
  readonly code = 'SERVICE_FORBIDDEN';
}

/** 404 on a call path: the call is unknown (deleted, or in another workspace). */
export class ServiceNotFoundError extends ServiceError {
  readonly code = 'SERVICE_NOT_FOUND';
}

/** The analysis of a known call is not ready yet: ask again later (after `analysis.ready`). */
export class ServiceNotReadyError extends ServiceError {
  readonly code = 'SERVICE_NOT_READY';
}

/** 429 for rate. `retryAfterMs` is undefined when the Service sent no usable Retry-After. */
export class ServiceRateLimitedError extends ServiceError {
  readonly code = 'SERVICE_RATE_LIMITED';
  constructor(
    message: string,
    context: ServiceErrorContext,
    readonly retryAfterMs: number | undefined,
  ) {
    super(message, context);
  }
}

/** 429 because the daily cap is spent; no request will succeed before `resetsAt` (epoch ms). */
export class ServiceDailyCapError extends ServiceError {
  readonly code = 'SERVICE_DAILY_CAP';
  constructor(
    message: string,
    context: ServiceErrorContext,
    readonly resetsAt: number,
  ) {
    super(message, context);
  }
}

/**
 * `refused`: no connection was made, so the request never reached the Service. `unsent`: the
 * connection broke before the request was written to it. `connection`: the connection broke
 * (reset, dropped) after the request was written, and the Service may or may not have acted on it.
 */
export type TransientKind = 'status' | 'timeout' | 'connection' | 'refused' | 'unsent';

/** 5xx, timeout, connection refused/reset/dropped: retried with backoff. */
export class ServiceTransientError extends ServiceError {
  readonly code = 'SERVICE_TRANSIENT';
  constructor(
    message: string,
    context: ServiceErrorContext,
    readonly kind: TransientKind,
    options?: { cause?: unknown },
  ) {
    super(message, context, options);
  }
}

/** A 2xx body that is not what the contract says; `field` names the first bad path (`data[3].id`). */
export class ServiceResponseError extends ServiceError {
  readonly code = 'SERVICE_BAD_RESPONSE';
  constructor(
    message: string,
    context: ServiceErrorContext,
    readonly field: string,
    readonly problems: readonly string[] = [],
  ) {
    super(message, context);
  }
}

/**
 * True when the failure proves the Service did not act on the request, so a request that must not
 * run twice (follow-up generation) may be sent again: a 429 (rate or daily cap), a 503 (the Service
 * declined to take it), or a connection refused or broken before the request was written. A
 * timeout after sending, another 5xx or a connection lost mid-request are ambiguous: false. Other
 * 4xx answers also mean nothing was done, but sending them again cannot help; they are not here.
 */
export function serviceDidNotAct(error: unknown): boolean {
  if (error instanceof ServiceRateLimitedError || error instanceof ServiceDailyCapError) return true;
  if (!(error instanceof ServiceTransientError)) return false;
  return error.kind === 'refused' || error.kind === 'unsent' || error.status === 503;
}
