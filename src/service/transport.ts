/**
 * One HTTP exchange with the Service (or a signed recording URL): no retries, no budget.
 * Network failures become ServiceTransientError; an abort by the caller's signal is rethrown
 * as the signal's reason. Nothing here logs, and no message carries a header value.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import type { Agent as AgentType, Dispatcher } from 'undici';
import { ServiceTransientError, type ServiceErrorContext, type TransientKind } from './errors.js';

export interface TransportOptions {
  /** Time allowed for response headers, and for each gap while reading the body. */
  timeoutMs: number;
}

export interface OutgoingRequest {
  method: 'GET' | 'POST';
  url: URL;
  headers: Record<string, string>;
  body?: string | undefined;
  signal?: AbortSignal | undefined;
  /** For error messages: method and path without the origin. */
  context: ServiceErrorContext;
}

export interface IncomingResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Dispatcher.ResponseData['body'];
}

export interface Transport {
  send(req: OutgoingRequest): Promise<IncomingResponse>;
  /** Reads the whole body as text (JSON answers and error bodies only; never recordings). */
  readText(res: IncomingResponse, req: OutgoingRequest): Promise<string>;
  close(): Promise<void>;
}

// undici's agent and its request API, not its index: the index loads fetch, WebSocket, caches and
// mocks too, ~3.5 MB of RSS a worker never uses (the package has no exports map to forbid this).
const require = createRequire(import.meta.url);
const Agent = require('undici/lib/dispatcher/agent.js') as typeof AgentType;
const dispatchRequest = require('undici/lib/api/api-request.js') as (
  this: Dispatcher,
  opts: Dispatcher.RequestOptions,
) => Promise<Dispatcher.ResponseData>;

export function createTransport(options: TransportOptions): Transport {
  // One keep-alive pool per client; the budget, not the pool, limits concurrency.
  const agent = new Agent({
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    connect: { timeout: options.timeoutMs },
  });

  return {
    async send(req) {
      const progress = { sent: false };
      try {
        const res = await dispatchRequest.call(agent.compose(trackSending(progress)), {
          origin: req.url.origin,
          path: `${req.url.pathname}${req.url.search}`,
          method: req.method,
          headers: req.headers,
          body: req.body,
          signal: req.signal,
          headersTimeout: options.timeoutMs,
          bodyTimeout: options.timeoutMs,
        });
        return { status: res.statusCode, headers: res.headers, body: res.body };
      } catch (err) {
        throw networkFailure(err, req, options.timeoutMs, progress.sent);
      }
    },

    async readText(res, req) {
      try {
        return await res.body.text();
      } catch (err) {
        throw networkFailure(err, req, options.timeoutMs);
      }
    },

    close: () => agent.close(),
  };
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
// No connection was made: the request cannot have reached the Service.
const REFUSED_CODES = new Set([
  'ECONNREFUSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
const CONNECTION_CODES = new Set([
  'UND_ERR_SOCKET',
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
]);

/**
 * Notes in `progress` when undici has written the whole request to the connection. A connection
 * that breaks before then (a reused keep-alive socket the server had closed) never carried the
 * request, so the Service cannot have acted on it (errors.ts, serviceDidNotAct).
 */
function trackSending(progress: { sent: boolean }): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (opts, handler) => {
    const tracked = new Proxy(handler, {
      get(target, key) {
        if (key === 'onRequestSent') {
          return () => {
            progress.sent = true;
            return (target as { onRequestSent?: () => unknown }).onRequestSent?.();
          };
        }
        const value: unknown = Reflect.get(target, key);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    return dispatch(opts, tracked);
  };
}

/**
 * Maps a thrown network error to ServiceTransientError; aborts pass through, and so do unknown
 * errors before the request was written, so that a ServiceError is the only kind a request that
 * reached the wire can end in. `sent` is false when the request was never written (body reads
 * happen after sending: the default).
 */
export function networkFailure(err: unknown, req: OutgoingRequest, timeoutMs: number, sent = true): unknown {
  if (req.signal?.aborted) return req.signal.reason ?? err;
  const code = errorCode(err);
  let kind: TransientKind | undefined;
  let what = '';
  if (code && TIMEOUT_CODES.has(code)) {
    kind = 'timeout';
    what = code === 'UND_ERR_BODY_TIMEOUT' ? 'stalled while sending its body' : 'did not answer';
    what += ` within ${timeoutMs} ms`;
  } else if (code && REFUSED_CODES.has(code)) {
    kind = 'refused';
    what = `could not be reached (${code})`;
  } else if (code && CONNECTION_CODES.has(code)) {
    kind = sent ? 'connection' : 'unsent';
    what = `dropped the connection (${code})${sent ? '' : ' before the request was sent'}`;
  } else if (sent) {
    // Whatever else broke once the request was out may have let the Service act on it.
    kind = 'connection';
    what = `failed after the request was sent (${code ?? (err instanceof Error ? err.name : 'unknown error')})`;
  }
  if (!kind) return err;
  const { method, path } = req.context;
  return new ServiceTransientError(`${method} ${path}: the server ${what}`, req.context, kind, {
    cause: err,
  });
}

function errorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  // undici wraps some socket errors; the syscall code sits on the cause.
  return errorCode((err as { cause?: unknown }).cause);
}
