/**
 * The `/v1` routes (spec section 4, shapes from CONTRACT.md). Auth, limits and faults are applied
 * by server.ts before a handler runs; handlers only do the endpoint's own work.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { Clock } from '../clock.js';
import type { FollowupRequestBody } from './content.js';
import { readBody, readJsonBody, sendError, sendJson } from './http.js';
import type { CallLifecycle } from './lifecycle.js';
import { listPage, parseListQuery } from './listing.js';
import { computeMetrics, parseMetricsQuery } from './metrics.js';
import { RECORDING_CONTENT_TYPE, recordingStream, signedRecordingPath } from './recording.js';
import { hashString } from './rng.js';
import type { SandboxState } from './state.js';
import { callToJson, type CallRecord } from './types.js';
import { validateContext, validateFollowupRequest } from './validation.js';

/** CONTRACT.md: a context body is at most 64 KiB. */
export const MAX_CONTEXT_BYTES = 64 * 1024;
const MAX_FOLLOWUP_BYTES = 64 * 1024;
const SIGNED_URL_TTL_MS = 5 * 60_000;

export interface ApiDeps {
  state: SandboxState;
  lifecycle: CallLifecycle;
  clock: Clock;
  seed: number;
  /** Key for signed recording URLs (random per sandbox). */
  recordingKey: Buffer;
}

export interface ApiRequest {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
}

export interface ApiRoute {
  /** Counter label, e.g. "GET /v1/calls/:id". */
  endpoint: string;
  /** Writes are refused to the read-only key. */
  write: boolean;
  handle: (deps: ApiDeps, request: ApiRequest) => Promise<void>;
}

const CALL_PARTS = ['transcript', 'analysis', 'recording', 'context', 'followups'] as const;
type CallPart = (typeof CALL_PARTS)[number];
const WRITE_PARTS: readonly CallPart[] = ['context', 'followups'];

/** Finds the route for a method and decoded path segments; unknown paths get a 404/405 route. */
export function matchApiRoute(method: string, parts: readonly string[]): ApiRoute {
  const [v1, resource, id, part, ...rest] = parts;
  if (v1 === 'v1' && rest.length === 0) {
    if (resource === 'metrics' && id === undefined) return only(method, 'GET', '/v1/metrics', getMetrics);
    if (resource === 'calls' && id === undefined) return only(method, 'GET', '/v1/calls', listCalls);
    if (resource === 'calls' && id !== undefined && part === undefined) {
      return only(method, 'GET', '/v1/calls/:id', (deps, r) => withCall(deps, r, id, getCall));
    }
    if (resource === 'calls' && id !== undefined && (CALL_PARTS as readonly string[]).includes(part ?? '')) {
      const callPart = part as CallPart;
      const allowed = WRITE_PARTS.includes(callPart) ? 'POST' : 'GET';
      return only(method, allowed, `/v1/calls/:id/${callPart}`, (deps, r) =>
        withCall(deps, r, id, PART_HANDLERS[callPart]),
      );
    }
  }
  return {
    endpoint: `${method} (unknown path)`,
    write: false,
    handle: async (_deps, { res }) => sendError(res, 404, 'not_found', 'no such endpoint'),
  };
}

function only(method: string, allowed: 'GET' | 'POST', path: string, handle: ApiRoute['handle']): ApiRoute {
  if (method === allowed) return { endpoint: `${allowed} ${path}`, write: allowed === 'POST', handle };
  return {
    endpoint: `${method} ${path}`,
    write: false,
    handle: async (_deps, { res }) =>
      sendError(res, 405, 'method_not_allowed', `use ${allowed} on ${path}`, { allow: allowed }),
  };
}

type CallHandler = (deps: ApiDeps, request: ApiRequest, call: CallRecord) => Promise<void>;

async function withCall(deps: ApiDeps, request: ApiRequest, id: string, handler: CallHandler): Promise<void> {
  const call = deps.state.getCall(id);
  if (call) return handler(deps, request, call);
  // Drain a posted body first so the 404 reaches a client still writing.
  if (request.req.method === 'POST') await readBody(request.req, 0);
  sendError(request.res, 404, 'call_not_found', `no call with id ${JSON.stringify(id)}`);
}

async function listCalls(deps: ApiDeps, { res, url }: ApiRequest): Promise<void> {
  const query = parseListQuery(url.searchParams);
  if (!query.ok) return sendError(res, 400, query.code, query.message);
  const page = listPage(deps.state.calls(), query.value);
  sendJson(res, 200, {
    data: page.data.map(callToJson),
    next_cursor: page.next_cursor,
    has_more: page.has_more,
  });
}

async function getMetrics(deps: ApiDeps, { res, url }: ApiRequest): Promise<void> {
  const query = parseMetricsQuery(url.searchParams);
  if (!query.ok) return sendError(res, 400, query.code, query.message);
  sendJson(res, 200, computeMetrics(deps.state.calls(), query.value));
}

async function getCall(_deps: ApiDeps, { res }: ApiRequest, call: CallRecord): Promise<void> {
  sendJson(res, 200, callToJson(call));
}

async function getTranscript(_deps: ApiDeps, { res }: ApiRequest, call: CallRecord): Promise<void> {
  if (!call.transcript)
    return sendError(res, 409, 'transcript_not_ready', 'the transcript is not processed yet');
  sendJson(res, 200, call.transcript);
}

async function getAnalysis(_deps: ApiDeps, { res }: ApiRequest, call: CallRecord): Promise<void> {
  if (call.status !== 'analyzed' || !call.analysis) {
    return sendError(res, 409, 'analysis_not_ready', `the analysis is not ready (call is ${call.status})`);
  }
  sendJson(res, 200, call.analysis);
}

async function getRecording(deps: ApiDeps, { res }: ApiRequest, call: CallRecord): Promise<void> {
  if (call.durationSeconds === undefined) {
    return sendError(res, 409, 'recording_not_ready', 'the call has no recording yet');
  }
  if (deps.state.settings.recordingRedirect) {
    const location = signedRecordingPath(deps.recordingKey, call.id, deps.clock.now() + SIGNED_URL_TTL_MS);
    res.writeHead(302, { location, 'content-length': '0' });
    res.end();
    return;
  }
  await streamRecording(deps, res, call);
}

/** Also serves the signed URL (server.ts checks the signature first). */
export async function streamRecording(
  deps: Pick<ApiDeps, 'seed'>,
  res: ServerResponse,
  call: CallRecord,
): Promise<void> {
  res.writeHead(200, {
    'content-type': RECORDING_CONTENT_TYPE,
    'content-length': String(call.recordingBytes),
    'content-disposition': `attachment; filename="${call.id}.mp3"`,
  });
  // A client that hangs up mid-download ends the pipeline with an error; nothing to do then.
  await pipeline(recordingStream(call.recordingBytes, hashString(call.id, deps.seed)), res).catch(
    () => undefined,
  );
}

function readApiJsonBody(request: ApiRequest, maxBytes: number): Promise<{ value: unknown } | undefined> {
  return readJsonBody(request.req, request.res, {
    maxBytes,
    tooLargeMessage: `the body is over ${maxBytes} bytes`,
    requireJsonType: true,
  });
}

async function postContext(deps: ApiDeps, request: ApiRequest, call: CallRecord): Promise<void> {
  const body = await readApiJsonBody(request, MAX_CONTEXT_BYTES);
  if (!body) return;
  const problem = validateContext(body.value);
  if (problem) return sendError(request.res, 422, 'invalid_context', problem);
  deps.state.addContext(call.id, { receivedAt: new Date(deps.clock.now()).toISOString(), body: body.value });
  sendJson(request.res, 202, { status: 'accepted' });
}

async function postFollowups(deps: ApiDeps, request: ApiRequest, call: CallRecord): Promise<void> {
  const body = await readApiJsonBody(request, MAX_FOLLOWUP_BYTES);
  if (!body) return;
  const checked = validateFollowupRequest(body.value);
  if (typeof checked === 'string') return sendError(request.res, 422, 'invalid_followup_request', checked);
  if (call.status === 'scheduled' || call.status === 'in_progress') {
    return sendError(
      request.res,
      409,
      'call_not_finished',
      'follow-ups can be drafted once the call has ended',
    );
  }
  const drafts = deps.lifecycle.generateFollowups(call, checked satisfies FollowupRequestBody);
  sendJson(request.res, 201, { data: drafts });
}

const PART_HANDLERS: Record<CallPart, CallHandler> = {
  transcript: getTranscript,
  analysis: getAnalysis,
  recording: getRecording,
  context: postContext,
  followups: postFollowups,
};
