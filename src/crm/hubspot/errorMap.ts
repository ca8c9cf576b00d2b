import {
  CrmAuthError,
  CrmDailyLimitError,
  CrmError,
  CrmFieldMissingError,
  CrmNotFoundError,
  CrmRateLimitedError,
  CrmRejectedError,
  CrmTransientError,
  CrmValidationError,
} from '../errors.js';

/**
 * Turns what the SDK throws into one CrmError class per outcome (pure). The SDK's `ApiException`
 * carries `code` (HTTP status), `body` (parsed JSON) and lower-cased `headers`; it is not exported,
 * so it is recognised by shape. Messages carry HubSpot's category and correlation id, never a token.
 */
export interface SdkErrorLike {
  code: number;
  body: unknown;
  headers: Record<string, string>;
}

export function isSdkError(e: unknown): e is SdkErrorLike {
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof (e as { code?: unknown }).code === 'number' &&
    typeof (e as { headers?: unknown }).headers === 'object'
  );
}

/** HubSpot documents no Retry-After; without one a 10-second window is waited out in full. */
export const DEFAULT_RATE_WAIT_MS = 10_000;

/** A search-limit 429 waits a second, the search limit's window (as @hubspot/api-client does). */
export const SEARCH_RATE_WAIT_MS = 1_000;

/**
 * HubSpot's 429 names the limit hit in `policyName` and `message` (API usage guidelines, "Error
 * responses"); the search limit's is "You have reached your secondly limit." (`SECONDLY`), which
 * @hubspot/api-client's RetryDecorator also reads as the search limit.
 */
const SEARCH_LIMIT_MESSAGE = 'You have reached your secondly limit.';

/**
 * 403 `MISSING_SCOPES`: the credential (Service Key, app) was not granted a scope the request
 * needs, named in `errors[].context.requiredGranularScopes` (HubSpot scopes guide).
 */
export class HubSpotMissingScopesError extends CrmRejectedError {
  constructor(
    message: string,
    readonly scopes: string[],
  ) {
    super(message, 'hubspot', 403);
  }
}

/** The five-searches-per-second limit: only searches need to wait for it. */
export class HubSpotSearchLimitError extends CrmRateLimitedError {}

export function rateLimitWaitMs(headers: Record<string, string>): number {
  const retryAfter = Number(headers['retry-after']);
  if (headers['retry-after'] !== undefined && Number.isFinite(retryAfter) && retryAfter >= 0)
    return retryAfter * 1000;
  const interval = Number(headers['x-hubspot-ratelimit-interval-milliseconds']);
  if (Number.isFinite(interval) && interval > 0) return interval;
  return DEFAULT_RATE_WAIT_MS;
}

/** HubSpot's daily limit resets at midnight in the portal's time zone; UTC midnight is assumed. */
export function msUntilUtcMidnight(nowMs: number): number {
  const next = new Date(nowMs);
  next.setUTCHours(24, 0, 0, 0);
  return next.getTime() - nowMs;
}

export function toCrmError(e: unknown, nowMs: number): CrmError {
  if (e instanceof CrmError) return e;
  if (!isSdkError(e)) {
    const message = e instanceof Error ? e.message : String(e);
    return new CrmTransientError(`HubSpot request failed: ${message}`, 'hubspot');
  }
  const body = (typeof e.body === 'object' && e.body !== null ? e.body : {}) as Record<string, unknown>;
  const detail = describe(body, e.code);
  if (e.code === 401) return new CrmAuthError(`HubSpot rejected the credentials: ${detail}`, 'hubspot', 401);
  if (e.code === 429) {
    if (body.policyName === 'SECONDLY' || body.message === SEARCH_LIMIT_MESSAGE) {
      return new HubSpotSearchLimitError(
        `HubSpot search limit: ${detail}`,
        'hubspot',
        429,
        SEARCH_RATE_WAIT_MS,
      );
    }
    if (body.policyName === 'DAILY') {
      return new CrmDailyLimitError(
        `HubSpot daily limit reached: ${detail}`,
        'hubspot',
        429,
        msUntilUtcMidnight(nowMs),
      );
    }
    return new CrmRateLimitedError(
      `HubSpot rate limit: ${detail}`,
      'hubspot',
      429,
      rateLimitWaitMs(e.headers),
    );
  }
  if (e.code === 403 && body.category === 'MISSING_SCOPES') {
    const scopes = contextLists(body, 'requiredGranularScopes');
    return new HubSpotMissingScopesError(`HubSpot: the credential lacks a scope: ${detail}`, scopes);
  }
  if (e.code === 404) return new CrmNotFoundError(`HubSpot: not found: ${detail}`, 'hubspot', 404);
  if (e.code >= 500 || e.code < 400)
    return new CrmTransientError(`HubSpot error: ${detail}`, 'hubspot', e.code);
  return rejection(body, e.code, detail);
}

/**
 * A 4xx refusal, by what it names: properties the portal lacks (PROPERTY_DOESNT_EXIST) are a
 * setup gap; a property a portal rule requires (2026-09 "CRM API Write Validation Enforcement",
 * changelog 2026-08-11: 400 VALIDATION_ERROR for a conditionally required property or one required
 * on the create form) is for the admin to resolve; anything else is a bad value.
 */
export function rejection(body: Record<string, unknown>, status: number, detail: string): CrmError {
  const problems = propertyProblems(body);
  const missing = [...new Set(problems.filter((p) => p.code === 'PROPERTY_DOESNT_EXIST').map((p) => p.name))];
  if (missing.length > 0) {
    return new CrmFieldMissingError(`HubSpot refused the request: ${detail}`, 'hubspot', status, missing);
  }
  const required = problems.find((p) => /REQUIRED/.test(p.code));
  if (body.category === 'VALIDATION_ERROR' && required) {
    return new CrmValidationError('hubspot', 'record', required.name, required.message, status);
  }
  return new CrmRejectedError(
    `HubSpot refused the request: ${detail}`,
    'hubspot',
    status,
    rejectedFields(body),
  );
}

interface PropertyProblem {
  name: string;
  code: string;
  message: string;
}

/**
 * Each property an error names, with its code: `errors[]` (`code`, `context.propertyName`), the
 * JSON HubSpot embeds in "Property values were not valid: [...]" (`error`, `name`), and the bare
 * 'Property "X" does not exist' an unknown `idProperty` gets.
 */
function propertyProblems(body: Record<string, unknown>): PropertyProblem[] {
  const out: PropertyProblem[] = [];
  const details = Array.isArray(body.errors) ? body.errors : [];
  for (const d of details as { code?: unknown; message?: unknown; context?: Record<string, unknown> }[]) {
    const names = Array.isArray(d.context?.propertyName) ? d.context.propertyName : [];
    for (const n of names)
      out.push({ name: String(n), code: String(d.code ?? ''), message: String(d.message ?? '') });
  }
  const message = typeof body.message === 'string' ? body.message : '';
  const embedded = /^[^[]*(\[.*\])\s*$/s.exec(message)?.[1];
  if (embedded) {
    try {
      for (const p of JSON.parse(embedded) as { name?: unknown; error?: unknown; message?: unknown }[]) {
        if (typeof p.name === 'string')
          out.push({ name: p.name, code: String(p.error ?? ''), message: String(p.message ?? '') });
      }
    } catch {
      // Not JSON after all: the named fields come from rejectedFields' pattern instead.
    }
  }
  const unknown = /^Property "([^"]+)" does not exist$/.exec(message)?.[1];
  if (unknown) out.push({ name: unknown, code: 'PROPERTY_DOESNT_EXIST', message });
  return out;
}

function describe(body: Record<string, unknown>, status: number): string {
  const parts = [`HTTP ${status}`];
  const kind = body.category ?? body.policyName ?? body.status;
  if (typeof kind === 'string') parts.push(kind);
  if (typeof body.message === 'string') parts.push(body.message.slice(0, 500));
  if (typeof body.correlationId === 'string') parts.push(`correlationId ${body.correlationId}`);
  return parts.join(' - ');
}

/**
 * The property names an error points at: `errors[].context.propertyName`, or the `"name"` fields
 * HubSpot embeds as JSON in "Property values were not valid: [...]".
 */
export function rejectedFields(body: Record<string, unknown>): string[] {
  const names = new Set(contextLists(body, 'propertyName'));
  if (typeof body.message === 'string') {
    for (const m of body.message.matchAll(/"name":"([^"]+)"/g)) if (m[1]) names.add(m[1]);
  }
  return [...names];
}

/** The values of `errors[].context[key]` across every error detail, deduplicated. */
function contextLists(body: Record<string, unknown>, key: string): string[] {
  const out = new Set<string>();
  for (const d of Array.isArray(body.errors) ? body.errors : []) {
    const list = (d as { context?: Record<string, unknown> }).context?.[key];
    if (Array.isArray(list)) for (const n of list) out.add(String(n));
  }
  return [...out];
}
