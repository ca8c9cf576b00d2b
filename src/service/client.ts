/**
 * The Service API client: one method per endpoint of spec section 4, each request paid from the
 * request budget, retried per retry.ts, validated against contract.ts.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { z } from 'zod';
import { DEFAULT_SAFETY_MARGIN_MS } from '../budget/budget.js';
import { silentLogger } from '../log/logger.js';
import { systemClock } from '../util/clock.js';
import { USER_AGENT } from '../version.js';
import {
  runWithRetries,
  SlotLapsedError,
  type AttemptLoopDeps,
  type AuthState,
  type Operation,
} from './attempts.js';
import {
  ACCEPT_JSON,
  ACCEPT_RECORDING,
  CONTENT_TYPE_JSON,
  analysis404Hint,
  analysisSchema,
  callListSchema,
  callSchema,
  CONTEXT_ACCEPTED_WITHOUT_BODY,
  contextAckSchema,
  followupsResponseSchema,
  listCallsQuery,
  MAX_CONTEXT_BYTES,
  metricsSchema,
  paths,
  transcriptSchema,
} from './contract.js';
import {
  ServiceBadRequestError,
  ServiceNotFoundError,
  ServiceNotReadyError,
  ServiceResponseError,
} from './errors.js';
import { fetchRecording } from './recording.js';
import { errorFromResponse } from './responseErrors.js';
import { createTransport, type OutgoingRequest } from './transport.js';
import type { CallOptions, CallPage, FollowupOptions, ServiceClient, ServiceClientDeps } from './types.js';
import { parseJsonText, parseResponse } from './validate.js';

export const DEFAULT_TIMEOUT_MS = 15_000;
export const DEFAULT_MAX_ATTEMPTS = 5;
/**
 * How long after its slot was granted a wrapped request (aroundSend) may still leave: the budget
 * recorded its start at the grant, and its windows keep DEFAULT_SAFETY_MARGIN_MS of margin for
 * the lag. Later, it is not sent and takes a fresh slot (SlotLapsedError).
 */
export const SEND_DEADLINE_MS = DEFAULT_SAFETY_MARGIN_MS / 2;

interface JsonRequest<S extends z.ZodType> {
  method: 'GET' | 'POST';
  path: string;
  /** Path with `:id` for the call id: the label in logs and budget metrics. */
  template: string;
  query?: URLSearchParams;
  body?: unknown;
  schema: S;
  idempotent?: boolean;
  /** What an empty 2xx body stands for; without it an empty body is a contract breach. */
  whenEmpty?: z.infer<S>;
  /** FollowupOptions.aroundSend: wraps each attempt inside its granted slot. */
  aroundSend?: FollowupOptions['aroundSend'];
}

export function createServiceClient(deps: ServiceClientDeps): ServiceClient {
  const base = new URL(deps.baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const clock = deps.clock ?? systemClock;
  const logger = deps.logger ?? silentLogger;
  const timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const userAgent = deps.userAgent ?? USER_AGENT;
  const transport = createTransport({ timeoutMs });
  const auth: AuthState = { unauthorized: false };
  const loop: AttemptLoopDeps = {
    budget: deps.budget,
    clock,
    logger,
    random: deps.random ?? Math.random,
    maxAttempts: deps.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    auth,
    onAttempt: deps.onAttempt,
  };
  const secrets = [deps.apiKey];
  let closed = false;

  const urlFor = (path: string, query?: URLSearchParams) => {
    const url = new URL(base.origin);
    url.pathname = basePath + path;
    if (query && query.size > 0) url.search = query.toString();
    return url;
  };

  /** Maps a non-2xx answer of `method path` to its error class. */
  const failureOf =
    (method: string, path: string, onAnalysisPath = false) =>
    (res: { status: number; headers: IncomingHttpHeaders }, bodyText: string) =>
      errorFromResponse({ method, path, ...res, bodyText, onAnalysisPath, nowMs: clock.now(), secrets });

  const serviceHeaders = (accept: string, hasBody: boolean): Record<string, string> => ({
    authorization: `Bearer ${deps.apiKey}`,
    accept,
    'user-agent': userAgent,
    ...(hasBody ? { 'content-type': CONTENT_TYPE_JSON } : {}),
  });

  function operation(method: string, path: string, template: string, opts: CallOptions, idempotent = true) {
    if (closed) throw new Error('the Service client is closed');
    return {
      method,
      path,
      label: `${method} ${template}`,
      signal: opts.signal,
      idempotent,
    } satisfies Operation;
  }

  async function requestJson<S extends z.ZodType>(
    req: JsonRequest<S>,
    opts: CallOptions,
  ): Promise<z.infer<S>> {
    const op = operation(req.method, req.path, req.template, opts, req.idempotent);
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    const context = { method: req.method, path: req.path };
    const outgoing: OutgoingRequest = {
      method: req.method,
      url: urlFor(req.path, req.query),
      headers: serviceHeaders(ACCEPT_JSON, body !== undefined),
      body,
      signal: opts.signal,
      context,
    };
    const failure = failureOf(req.method, req.path, req.template.endsWith('/analysis'));
    const send = async (): Promise<z.infer<S>> => {
      const res = await transport.send(outgoing);
      const text = await transport.readText(res, outgoing);
      if (res.status < 200 || res.status > 299)
        throw failure({ status: res.status, headers: res.headers }, text);
      const ok = { ...context, status: res.status };
      if (text.trim() === '' && req.whenEmpty !== undefined) return req.whenEmpty;
      return parseResponse(req.schema, parseJsonText(text, ok), ok);
    };
    // A wrapper's database round trip before sending must stay inside the budget's safety
    // margin, which assumes the request leaves when its slot is granted: past SEND_DEADLINE_MS
    // it is not sent, the wrapper sees the SlotLapsedError (and undoes its work), and the
    // attempt loop takes a new slot.
    const { aroundSend } = req;
    const once = aroundSend
      ? () => {
          const grantedAt = clock.now();
          return aroundSend(() => {
            const lateMs = clock.now() - grantedAt;
            if (lateMs > SEND_DEADLINE_MS) throw new SlotLapsedError(op.label, lateMs);
            return send();
          });
        }
      : send;
    return runWithRetries(loop, op, () =>
      deps.budget.run(opts.priority, once, { signal: opts.signal, label: op.label }),
    );
  }

  const callPaths = (id: string, pick: (id: string) => string, method = 'GET') => {
    if (typeof id !== 'string' || id === '') {
      throw new ServiceBadRequestError('a call id is required', { method, path: pick(':id') });
    }
    return { path: pick(id), template: decodeURIComponent(pick(':id')) };
  };

  async function listCallsPage(params: Parameters<ServiceClient['listCallsPage']>[0], opts: CallOptions) {
    const path = paths.calls();
    const page = await requestJson(
      { method: 'GET', path, template: path, query: listCallsQuery(params), schema: callListSchema },
      opts,
    );
    const nextCursor = page.next_cursor ?? null;
    if (page.has_more && !nextCursor) {
      throw new ServiceResponseError(
        `GET ${path} said has_more without a next_cursor`,
        { method: 'GET', path, status: 200 },
        'next_cursor',
        ['next_cursor is missing while has_more is true'],
      );
    }
    return { calls: page.data, nextCursor, hasMore: page.has_more } satisfies CallPage;
  }

  const client: ServiceClient = {
    listCallsPage,

    async *listCalls(params, opts) {
      let cursor = params.cursor ?? null;
      for (;;) {
        const page = await listCallsPage({ ...params, cursor }, opts);
        yield page;
        if (!page.hasMore) return;
        if (page.nextCursor === cursor) {
          throw new ServiceResponseError(
            `GET ${paths.calls()} returned the same next_cursor again; stopping to avoid a loop`,
            { method: 'GET', path: paths.calls(), status: 200 },
            'next_cursor',
          );
        }
        cursor = page.nextCursor;
      }
    },

    async getCall(id, opts) {
      return requestJson({ method: 'GET', ...callPaths(id, paths.call), schema: callSchema }, opts);
    },

    async getTranscript(id, opts) {
      return requestJson(
        { method: 'GET', ...callPaths(id, paths.transcript), schema: transcriptSchema },
        opts,
      );
    },

    async getAnalysis(id, opts) {
      const where = callPaths(id, paths.analysis);
      try {
        return await requestJson({ method: 'GET', ...where, schema: analysisSchema }, opts);
      } catch (err) {
        if (!(err instanceof ServiceNotFoundError) || err.path !== where.path) throw err;
        if (analysis404Hint(err.serviceCode) === 'not_found') throw err;
        // A 404 on /analysis that does not say why: not ready if the call itself is known.
        try {
          await client.getCall(id, opts);
        } catch (probe) {
          throw probe instanceof ServiceNotFoundError ? err : probe;
        }
        throw new ServiceNotReadyError(
          `GET ${where.path} answered 404 for a known call: analysis not ready yet`,
          {
            method: 'GET',
            path: where.path,
            status: 404,
            serviceCode: err.serviceCode,
          },
        );
      }
    },

    async getRecording(id, opts) {
      const where = callPaths(id, paths.recording);
      const op = operation('GET', where.path, where.template, opts);
      return runWithRetries(loop, op, () =>
        fetchRecording({
          transport,
          budget: deps.budget,
          priority: opts.priority,
          signal: opts.signal,
          label: op.label,
          path: where.path,
          url: urlFor(where.path),
          serviceBase: base,
          serviceHeaders: serviceHeaders(ACCEPT_RECORDING, false),
          userAgent,
          failure: (res, bodyText) =>
            failureOf('GET', where.path)({ status: res.status, headers: res.headers }, bodyText),
        }),
      );
    },

    async getMetrics(params, opts) {
      const query = new URLSearchParams();
      if (params.from) query.set('from', params.from);
      if (params.to) query.set('to', params.to);
      if (params.groupBy) query.set('group_by', params.groupBy);
      const path = paths.metrics();
      return requestJson({ method: 'GET', path, template: path, query, schema: metricsSchema }, opts);
    },

    async pushContext(id, body, opts) {
      const where = callPaths(id, paths.context, 'POST');
      const bytes = Buffer.byteLength(JSON.stringify(body));
      if (bytes > MAX_CONTEXT_BYTES) {
        const msg = `POST ${where.path} not sent: the context is ${bytes} bytes, the Service takes at most ${MAX_CONTEXT_BYTES}`;
        throw new ServiceBadRequestError(msg, { method: 'POST', path: where.path });
      }
      return requestJson(
        {
          method: 'POST',
          ...where,
          body,
          schema: contextAckSchema,
          whenEmpty: { ...CONTEXT_ACCEPTED_WITHOUT_BODY },
        },
        opts,
      );
    },

    async generateFollowups(id, body, opts) {
      const where = callPaths(id, paths.followups, 'POST');
      // Each POST creates new drafts: only retried when the Service surely did nothing.
      const res = await requestJson(
        {
          method: 'POST',
          ...where,
          body,
          schema: followupsResponseSchema,
          idempotent: false,
          aroundSend: opts.aroundSend,
        },
        opts,
      );
      return res.data;
    },

    health: () => ({
      unauthorized: auth.unauthorized,
      ...(auth.lastError === undefined ? {} : { lastError: auth.lastError }),
    }),

    resetAuth() {
      if (auth.unauthorized) logger.info('Service API key reset: requests allowed again');
      auth.unauthorized = false;
    },

    async close() {
      if (closed) return;
      closed = true;
      await transport.close();
    },
  };
  return client;
}
