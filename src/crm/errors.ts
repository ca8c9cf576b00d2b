/**
 * What a CRM said, as one class per outcome, so callers branch on the class:
 * retry later (transient, rate limited), stop (auth), or fail the call now (rejected).
 */
export type CrmErrorCode =
  | 'CRM_AUTH'
  | 'CRM_RATE_LIMITED'
  | 'CRM_DAILY_LIMIT'
  | 'CRM_REJECTED'
  | 'CRM_NOT_FOUND'
  | 'CRM_TRANSIENT'
  | 'CRM_SETUP';

export abstract class CrmError extends Error {
  abstract readonly code: CrmErrorCode;
  abstract readonly retryable: boolean;
  constructor(
    message: string,
    readonly crm: 'hubspot' | 'salesforce',
    readonly status?: number,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** Credentials invalid and a refresh did not help: stop writing, tell the operator. */
export class CrmAuthError extends CrmError {
  readonly code = 'CRM_AUTH';
  readonly retryable = false;
}

/** Short-window limit: wait `retryAfterMs` and try again. */
export class CrmRateLimitedError extends CrmError {
  readonly code = 'CRM_RATE_LIMITED';
  readonly retryable = true;
  constructor(
    message: string,
    crm: 'hubspot' | 'salesforce',
    status: number | undefined,
    readonly retryAfterMs: number,
  ) {
    super(message, crm, status);
  }
}

/** The daily/org API allowance is spent: wait `retryAfterMs` (usually until the quota resets). */
export class CrmDailyLimitError extends CrmError {
  readonly code = 'CRM_DAILY_LIMIT';
  readonly retryable = true;
  constructor(
    message: string,
    crm: 'hubspot' | 'salesforce',
    status: number | undefined,
    readonly retryAfterMs: number,
  ) {
    super(message, crm, status);
  }
}

/** The CRM refused the data (validation, missing field, permission): do not retry as is. */
export class CrmRejectedError extends CrmError {
  readonly code = 'CRM_REJECTED';
  readonly retryable = false;
  constructor(
    message: string,
    crm: 'hubspot' | 'salesforce',
    status?: number,
    readonly fields: string[] = [],
  ) {
    super(message, crm, status);
  }
}

export class CrmNotFoundError extends CrmError {
  readonly code = 'CRM_NOT_FOUND';
  readonly retryable = false;
}

/** 5xx, timeouts, resets: retry with backoff. */
export class CrmTransientError extends CrmError {
  readonly code = 'CRM_TRANSIENT';
  readonly retryable = true;
}

/** A mapped custom field or property is missing: run `crm-sync doctor`. */
export class CrmSetupError extends CrmError {
  readonly code = 'CRM_SETUP';
  readonly retryable = false;
}
