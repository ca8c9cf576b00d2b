/**
 * The public types of the Service client. Wire shapes come from the zod schemas in contract.ts
 * (lenient: unknown fields are kept, so these types carry an index signature).
 */
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import type { Priority, RequestBudget } from '../budget/types.js';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../util/clock.js';
import type {
  analysisSchema,
  callSchema,
  ContextBody,
  FollowupRequest,
  followupDraftSchema,
  scoringSchema,
  transcriptSchema,
} from './contract.js';

export type { ContextBody, ContextDeal, FollowupRequest } from './contract.js';

export type Call = z.infer<typeof callSchema>;
export type Scoring = z.infer<typeof scoringSchema>;
export type Transcript = z.infer<typeof transcriptSchema>;
export type Analysis = z.infer<typeof analysisSchema>;
export type FollowupDraft = z.infer<typeof followupDraftSchema>;

export interface Recording {
  contentType: string;
  contentLength?: number;
  /** The response body, streamed; the caller must consume or destroy it. */
  body: Readable;
}

export interface ServiceClientDeps {
  /** Service base URL, without `/v1` (e.g. https://api.example.com). */
  baseUrl: string;
  apiKey: string;
  /** Every attempt, retries included, is paid from this budget. */
  budget: RequestBudget;
  /** Default: the system clock. Waits between attempts use it. */
  clock?: Clock;
  /** Default: silent. */
  logger?: Logger;
  /** Per request: time allowed for the response headers, and for each gap while reading the body. Default 15 000. */
  timeoutMs?: number;
  /** Attempts per call, the first included. Default 5. */
  maxAttempts?: number;
  /** Jitter source in [0, 1). Default Math.random. */
  random?: () => number;
  /** Default: USER_AGENT from src/version.ts. */
  userAgent?: string;
  /** Told after every attempt (retries included), for metrics: endpoint label, status, duration. */
  onAttempt?: (info: AttemptInfo) => void;
}

export interface AttemptInfo {
  /** Low-cardinality endpoint label, e.g. `GET /v1/calls/:id`. */
  endpoint: string;
  /** HTTP status as text, or `timeout` / `connection` when no response came. */
  status: string;
  durationMs: number;
}

export interface CallOptions {
  priority: Priority;
  signal?: AbortSignal;
}

export interface FollowupOptions extends CallOptions {
  /**
   * Wraps each attempt once the budget has granted its slot: `send` sends the request and reads
   * the answer. For work that must happen only while a request is really leaving, and be undone
   * when it failed (the follow-up claim: a kill while the request waits for a slot or for its
   * retry then costs nothing). If it throws without calling `send`, nothing is sent.
   */
  aroundSend?: <T>(send: () => Promise<T>) => Promise<T>;
}

export interface ListCallsParams {
  limit?: number;
  cursor?: string | null;
  createdAfter?: string;
  createdBefore?: string;
  status?: string;
}

export interface CallPage {
  calls: Call[];
  /** Keep it even on the last page: asking with it later returns calls created since. */
  nextCursor: string | null;
  hasMore: boolean;
}

export interface ServiceHealth {
  /** True after a 401, until `resetAuth()`; no request is made meanwhile. */
  unauthorized: boolean;
  /** `CODE: message` of the last failed call, cleared by the next success. */
  lastError?: string;
}

export interface ServiceClient {
  listCallsPage(params: ListCallsParams, opts: CallOptions): Promise<CallPage>;
  /** Follows `next_cursor` while `has_more`; each page hands back its cursor. */
  listCalls(params: ListCallsParams, opts: CallOptions): AsyncIterable<CallPage>;
  getCall(id: string, opts: CallOptions): Promise<Call>;
  getTranscript(id: string, opts: CallOptions): Promise<Transcript>;
  /** ServiceNotReadyError while not ready (409, or 404 on the analysis path of a known call). */
  getAnalysis(id: string, opts: CallOptions): Promise<Analysis>;
  getRecording(id: string, opts: CallOptions): Promise<Recording>;
  getMetrics(
    params: { from?: string; to?: string; groupBy?: string },
    opts: CallOptions,
  ): Promise<Record<string, unknown>>;
  pushContext(id: string, body: ContextBody, opts: CallOptions): Promise<{ status: string }>;
  generateFollowups(id: string, body: FollowupRequest, opts: FollowupOptions): Promise<FollowupDraft[]>;
  health(): ServiceHealth;
  /** After the operator replaced the key: allow requests again. */
  resetAuth(): void;
  close(): Promise<void>;
}
