import {
  CrmAuthError,
  CrmDailyLimitError,
  CrmError,
  CrmFieldMissingError,
  CrmNotFoundError,
  CrmRateLimitedError,
  CrmRejectedError,
  CrmSetupError,
  CrmTransientError,
  CrmValidationError,
} from '../errors.js';

/** What jsforce throws: HttpApiError (`errorCode`, `data`), OAuth errors (`name`), fetch errors (`code`). */
interface SdkError {
  name?: string;
  message?: string;
  errorCode?: string;
  code?: string;
  data?: unknown;
}

/** Per-record error inside an sObject Collections result (note: `statusCode`, not `errorCode`). */
export interface RecordError {
  statusCode?: string;
  errorCode?: string;
  message?: string;
  fields?: string[];
}

const AUTH = new Set([
  'INVALID_SESSION_ID',
  'INVALID_AUTH_HEADER',
  'API_DISABLED_FOR_ORG',
  'API_CURRENTLY_DISABLED',
]);
const OAUTH =
  /^(invalid_grant|invalid_client|invalid_client_id|invalid_request|unsupported_grant_type|inactive_user|inactive_org|unauthorized_client|invalid_app_access)$/;
// Salesforce's 5xx bodies, and lock/timeouts that succeed when tried again.
const TRANSIENT = new Set([
  'SERVER_UNAVAILABLE',
  'UNKNOWN_EXCEPTION',
  'UNABLE_TO_LOCK_ROW',
  'QUERY_TIMEOUT',
  'REQUEST_RUNNING_TOO_LONG',
]);
const NETWORK = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
]);
/** REQUEST_LIMIT_EXCEEDED also names the concurrent long-request limit, which clears in seconds. */
const CONCURRENT_LIMIT_WAIT_MS = 5_000;

/** Fields named by an error: its `fields`, else the column in "No such column 'X' on …". */
export function errorFields(err: RecordError): string[] {
  if (Array.isArray(err.fields) && err.fields.length > 0) return err.fields.map(String);
  const m = /No such column '([^']+)'/.exec(err.message ?? '');
  return m ? [m[1]!] : [];
}

/**
 * Refusals only the org's admin resolves: a validation rule (FIELD_CUSTOM_VALIDATION_EXCEPTION, its
 * error message the rule's own), a field required by the org (REQUIRED_FIELD_MISSING), a lookup
 * filter (FIELD_FILTER_VALIDATION_EXCEPTION). REST API Developer Guide, "Status Codes and Error
 * Responses"; sObject Collections report them per record in `errors[].statusCode`.
 */
const VALIDATION = new Set([
  'FIELD_CUSTOM_VALIDATION_EXCEPTION',
  'REQUIRED_FIELD_MISSING',
  'FIELD_FILTER_VALIDATION_EXCEPTION',
]);

/** "No such column 'X' on sobject of type Y": the org lacks the field (an earlier release's set). */
const NO_SUCH_COLUMN = /No such column '([^']+)'(?: on (?:sobject of type|entity '?)\s*([A-Za-z0-9_]+))?/;

/**
 * One refusal, by its code: a validation rule, a field the org lacks, anything else; `object`
 * is the sObject written, when known.
 */
function refusal(code: string, err: RecordError, text: string, object?: string): CrmError {
  if (VALIDATION.has(code)) {
    return new CrmValidationError('salesforce', object ?? 'record', errorFields(err)[0], err.message ?? code);
  }
  const column = NO_SUCH_COLUMN.exec(err.message ?? '');
  if (code === 'INVALID_FIELD' && column) {
    const missing = new CrmFieldMissingError(text, 'salesforce', 400, [column[1]!]);
    const on = object ?? column[2];
    return on ? missing.on(on) : missing;
  }
  return new CrmRejectedError(text, 'salesforce', 400, errorFields(err));
}

/** A per-record failure from a collection result, as the refusal it is. */
export function recordFailure(errors: RecordError[], key: string, object?: string): CrmError {
  const first = errors[0] ?? {};
  const code = first.statusCode ?? first.errorCode ?? 'UNKNOWN';
  const fields = [...new Set(errors.flatMap(errorFields))];
  const text = `Salesforce refused ${key}: ${code}: ${first.message ?? ''}`.trim();
  return refusal(code, { ...first, fields }, text, object);
}

export interface MapContext {
  /** How long to wait after REQUEST_LIMIT_EXCEEDED. */
  dailyPauseMs: number;
  /** Set when the last session refresh failed; explains jsforce's generic wrapper error. */
  refreshFailure?: CrmError | undefined;
}

/**
 * Maps whatever jsforce threw to one CrmError class; errors that are not from Salesforce or the
 * network (programming errors) come back unchanged. Messages carry Salesforce's text, never tokens.
 */
export function toCrmError(err: unknown, ctx: MapContext): Error {
  if (err instanceof CrmError) return err;
  const e = (err ?? {}) as SdkError;
  const message = e.message ?? String(err);
  if (message.startsWith('Unable to refresh session')) {
    return (
      ctx.refreshFailure ??
      new CrmAuthError('Salesforce session expired and could not be refreshed', 'salesforce', 401)
    );
  }
  if (e.name && OAUTH.test(e.name)) {
    return new CrmAuthError(
      `Salesforce OAuth refused the credentials: ${e.name}: ${message}`,
      'salesforce',
      400,
    );
  }
  if (e.name === 'FetchError' || e.name === 'AbortError' || (e.code && NETWORK.has(e.code))) {
    return new CrmTransientError(`Salesforce unreachable: ${message}`, 'salesforce');
  }
  // OAuth2 token errors carry the HTTP status only in `name` (ERROR_HTTP_503).
  let code = e.errorCode ?? (e.name && /^ERROR_HTTP_\d{3}$/.test(e.name) ? e.name : undefined);
  let first: RecordError | undefined = e.data as RecordError | undefined;
  if (code === 'MULTIPLE_API_ERRORS' && Array.isArray(e.data) && e.data.length > 0) {
    first = e.data[0] as RecordError;
    code = first.errorCode ?? code;
  }
  if (!code) return err instanceof Error ? err : new Error(message);
  const httpStatus = /^ERROR_HTTP_(\d{3})$/.exec(code);
  if (httpStatus) {
    const status = Number(httpStatus[1]);
    if (status === 401) return new CrmAuthError('Salesforce refused the session', 'salesforce', 401);
    if (status === 420 || status === 429) {
      return new CrmRateLimitedError(
        `Salesforce throttled the request (${status})`,
        'salesforce',
        status,
        1_000,
      );
    }
    if (status >= 500) return new CrmTransientError(`Salesforce answered ${status}`, 'salesforce', status);
    return new CrmRejectedError(`Salesforce answered ${status}`, 'salesforce', status);
  }
  if (AUTH.has(code)) {
    return new CrmAuthError(`Salesforce refused the session: ${code}: ${message}`, 'salesforce', 401);
  }
  if (code === 'REQUEST_LIMIT_EXCEEDED') {
    if (/concurrent/i.test(message)) {
      return new CrmRateLimitedError(`Salesforce: ${message}`, 'salesforce', 403, CONCURRENT_LIMIT_WAIT_MS);
    }
    return new CrmDailyLimitError(
      `Salesforce API limit reached: ${message}`,
      'salesforce',
      403,
      ctx.dailyPauseMs,
    );
  }
  if (TRANSIENT.has(code)) return new CrmTransientError(`Salesforce: ${code}: ${message}`, 'salesforce', 503);
  if (code === 'NOT_FOUND') return new CrmNotFoundError(`Salesforce: ${message}`, 'salesforce', 404);
  if (code === 'INVALID_TYPE') {
    return new CrmSetupError(`Salesforce object not available: ${message}`, 'salesforce', 400);
  }
  // INVALID_FIELD, STRING_TOO_LONG, REQUIRED_FIELD_MISSING, MALFORMED_QUERY, MULTIPLE_CHOICES, …
  const detail: RecordError = first && typeof first === 'object' && !Array.isArray(first) ? first : {};
  return refusal(
    code,
    { ...detail, message: detail.message ?? message },
    `Salesforce rejected the request: ${code}: ${message}`,
  );
}
