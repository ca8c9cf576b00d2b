/**
 * Every assumption about the Service API that the published spec leaves open, in one place.
 * Source: /work/shared/CONTRACT.md ("Working contract with the Service API"); when the vendor
 * documents the API, this file is the one to change. Each block names the CONTRACT.md section.
 * Where the spec itself is explicit (Bearer auth, /v1 paths, the call object's fields, 429 +
 * Retry-After) it is followed as is.
 */
import { z } from 'zod';

// ---- CONTRACT.md "Transport" ------------------------------------------------------------------

export const API_PREFIX = '/v1';

/** Sent with every request (with `Authorization: Bearer` and the User-Agent). */
export const ACCEPT_JSON = 'application/json';
/** Sent only when there is a body. */
export const CONTENT_TYPE_JSON = 'application/json';
/** The recording is audio; error bodies are still JSON, so JSON stays first. */
export const ACCEPT_RECORDING = 'application/json, audio/*;q=0.9, */*;q=0.8';

function callPath(id: string, rest = ''): string {
  return `${API_PREFIX}/calls/${encodeURIComponent(id)}${rest}`;
}

export const paths = {
  calls: () => `${API_PREFIX}/calls`,
  call: (id: string) => callPath(id),
  transcript: (id: string) => callPath(id, '/transcript'),
  analysis: (id: string) => callPath(id, '/analysis'),
  recording: (id: string) => callPath(id, '/recording'),
  context: (id: string) => callPath(id, '/context'),
  followups: (id: string) => callPath(id, '/followups'),
  metrics: () => `${API_PREFIX}/metrics`,
};

/** Error bodies: `{"error": {"code", "message"}}` when present; never relied upon. */
const errorBodySchema = z.object({
  error: z.object({ code: z.string().optional(), message: z.string().optional() }),
});

export function readErrorBody(text: string): { code?: string | undefined; message?: string | undefined } {
  try {
    const parsed = errorBodySchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data.error : {};
  } catch {
    return {};
  }
}

/**
 * What a non-2xx status means. CONTRACT.md names 409 only for an analysis not ready; we read any
 * 409 ("conflict with the resource's state") as "not ready yet, ask later" (the sandbox answers 409
 * for a transcript or recording not ready, and for follow-ups of a call not finished).
 */
export type StatusMeaning =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'not_ready'
  | 'rate_limited'
  | 'transient'
  | 'unexpected';

export function meaningOfStatus(status: number): StatusMeaning {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 409) return 'not_ready';
  if (status === 429) return 'rate_limited';
  // 408 is the server giving up on a slow request: as transient as a 503.
  if (status === 408 || status >= 500) return 'transient';
  if (status >= 400) return 'bad_request';
  return 'unexpected';
}

/**
 * 404 on `/analysis` means "not ready" for a known call and "unknown call" otherwise. An error
 * code that says which settles it; without one the client asks for the call itself.
 */
export function analysis404Hint(serviceCode: string | undefined): 'not_ready' | 'not_found' | 'ask' {
  if (!serviceCode) return 'ask';
  if (/not[_-]?ready|pending|processing|in[_-]?progress/i.test(serviceCode)) return 'not_ready';
  if (/call[_-]?not[_-]?found/i.test(serviceCode)) return 'not_found';
  return 'ask';
}

/**
 * A 429 is the daily cap when its error code contains `daily`, or its Retry-After reaches past
 * the next UTC midnight (the cap counts per UTC day).
 */
export function isDailyCap(serviceCode: string | undefined, retryAfterMs: number | undefined, nowMs: number) {
  if (serviceCode && /daily/i.test(serviceCode)) return true;
  return retryAfterMs !== undefined && nowMs + retryAfterMs > nextUtcMidnight(nowMs);
}

/** When a spent daily cap resets: Retry-After when sent, else the next UTC midnight. */
export function dailyCapResetsAt(retryAfterMs: number | undefined, nowMs: number): number {
  return retryAfterMs !== undefined ? nowMs + retryAfterMs : nextUtcMidnight(nowMs);
}

export function nextUtcMidnight(nowMs: number): number {
  const d = new Date(nowMs);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
}

// ---- CONTRACT.md "GET /v1/calls" --------------------------------------------------------------

export const LIST_LIMIT_MAX = 100;

export interface ListCallsQuery {
  limit?: number | undefined;
  cursor?: string | null | undefined;
  createdAfter?: string | undefined;
  createdBefore?: string | undefined;
  status?: string | undefined;
}

/** Query names; `limit` is clamped to 1..100 rather than earning a 400. */
export function listCallsQuery(p: ListCallsQuery): URLSearchParams {
  const q = new URLSearchParams();
  if (p.limit !== undefined)
    q.set('limit', String(Math.min(LIST_LIMIT_MAX, Math.max(1, Math.floor(p.limit)))));
  if (p.cursor) q.set('cursor', p.cursor);
  if (p.createdAfter) q.set('created_after', p.createdAfter);
  if (p.createdBefore) q.set('created_before', p.createdBefore);
  if (p.status) q.set('status', p.status);
  return q;
}

/** Assumed lifecycle; any other value is kept as it came, never rejected. */
export const KNOWN_CALL_STATUSES = [
  'scheduled',
  'in_progress',
  'completed',
  'processing',
  'analyzed',
  'failed',
];

// ---- Call object: spec section 2; required fields chosen here -------------------------------
// Only what no consumer can do without is required (id, status, created_at). Optional fields may
// be absent or null; when present they must have the spec's type. Unknown fields are kept.

const text = z.string().nullish();
const num = z.number().nullish();

export const scoringSchema = z.looseObject({
  overall: num,
  rapport: num,
  discovery: num,
  objection_handling: num,
  closing: num,
});

export const callSchema = z.looseObject({
  id: z.string().min(1),
  status: z.string(),
  created_at: z.string().min(1),
  duration_seconds: num,
  platform: text,
  participant: z.looseObject({ name: text, email: text, company: text }).nullish(),
  // Missing scoring means not scored yet (CONTRACT.md "Call resources").
  scoring: scoringSchema.nullish(),
  objections_detected: num,
  objections_handled: num,
  methodology: text,
  links: z.looseObject({ transcript: text, analysis: text, recording: text, followups: text }).nullish(),
});

export const callListSchema = z.looseObject({
  data: z.array(callSchema),
  // null only when nothing came back and no cursor was sent; required when has_more.
  next_cursor: z.string().nullish(),
  has_more: z.boolean(),
});

// ---- CONTRACT.md "Call resources" -------------------------------------------------------------

export const transcriptSchema = z.looseObject({
  call_id: z.string().min(1),
  language: text,
  segments: z.array(z.looseObject({ speaker: text, start_seconds: num, end_seconds: num, text: z.string() })),
});

export const analysisSchema = z.looseObject({
  call_id: z.string().min(1),
  summary: text,
  scoring: scoringSchema.nullish(),
  objections: z
    .array(z.looseObject({ type: text, text, handled: z.boolean().nullish(), at_seconds: num }))
    .nullish(),
  next_steps: z.array(z.string()).nullish(),
  methodology: text,
});

/** Metrics are opaque: any JSON object, shown to the operator, not parsed deeply. */
export const metricsSchema = z.looseObject({});

/** Recording: audio bytes, or a 302 to a signed URL (fetched without our Authorization). */
export const RECORDING_REDIRECT_STATUSES = [301, 302, 303, 307, 308];

/**
 * Whether a redirect target is itself a Service API request (same origin, under /v1) and so is
 * paid from the budget; a signed URL on a storage host, or outside /v1, is not.
 */
export function isServiceApiUrl(target: URL, serviceBase: URL): boolean {
  const prefix = serviceBase.pathname.replace(/\/+$/, '') + API_PREFIX + '/';
  return target.origin === serviceBase.origin && target.pathname.startsWith(prefix);
}

// ---- CONTRACT.md "POST /v1/calls/:id/context" -------------------------------------------------

export const MAX_CONTEXT_BYTES = 64 * 1024;

export interface ContextDeal {
  id: string;
  name?: string | null;
  stage?: string | null;
  amount?: number | null;
  currency?: string | null;
  close_date?: string | null;
  owner?: string | null;
  [field: string]: unknown;
}

export interface ContextBody {
  source: 'hubspot' | 'salesforce';
  contact?: Record<string, unknown>;
  company?: Record<string, unknown>;
  deals?: ContextDeal[];
  custom?: Record<string, unknown>;
}

/** 200 or 202 `{"status": "accepted"}`; an empty 2xx body is taken as accepted. */
export const contextAckSchema = z.looseObject({ status: z.string() });
export const CONTEXT_ACCEPTED_WITHOUT_BODY = { status: 'accepted' } as const;

// ---- CONTRACT.md "POST /v1/calls/:id/followups" -----------------------------------------------

export interface FollowupRequest {
  tone?: string;
  recipients?: string[];
  instructions?: string;
}

export const followupDraftSchema = z.looseObject({
  id: z.string().min(1),
  subject: z.string(),
  body: z.string(),
  to: z.array(z.string()).nullish(),
  created_at: text,
});

export const followupsResponseSchema = z.looseObject({ data: z.array(followupDraftSchema) });

// ---- CONTRACT.md "Webhooks" -------------------------------------------------------------------

export const webhookEventSchema = z.looseObject({
  id: z.string().min(1),
  type: z.string().min(1),
  created_at: z.string().min(1),
  data: z.looseObject({
    call_id: z.string().min(1),
    call: callSchema.nullish(),
    followup: followupDraftSchema.nullish(),
  }),
});
