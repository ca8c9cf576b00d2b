/**
 * The request entry point. API requests (everything but /_admin and signed downloads) go through,
 * in order: counting, bearer auth (401), the limiter (429, decided at arrival), fault injection,
 * added latency, the read-only scope (403), then the route's handler (faultInjection.ts may run
 * it first and lose its answer).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { sleep } from '../clock.js';
import { matchApiRoute, streamRecording, type ApiDeps } from './api.js';
import { injectFault } from './faultInjection.js';
import { decideFault } from './faults.js';
import { sendError, splitPath } from './http.js';
import { checkSignedRecording } from './recording.js';
import { formatRetryAfter } from './retryAfter.js';
import type { Random } from './rng.js';
import { MAIN_KEY } from './state.js';

export interface ServerDeps extends ApiDeps {
  apiKey: string;
  /** A second key whose writes (POSTs) are refused with 403. */
  readOnlyApiKey?: string | undefined;
  /** Random source for fault decisions. */
  random: Random;
  logger?: Logger | undefined;
  admin: (req: IncomingMessage, res: ServerResponse, parts: string[], url: URL) => Promise<void>;
}

interface Caller {
  limiterKey: string;
  readOnly: boolean;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Compares digests, so neither the key's length nor its content leaks through timing. */
function authenticate(header: string | undefined, deps: ServerDeps): Caller | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!match?.[1]) return undefined;
  const given = digest(match[1]);
  if (timingSafeEqual(given, digest(deps.apiKey))) return { limiterKey: MAIN_KEY, readOnly: false };
  if (deps.readOnlyApiKey && timingSafeEqual(given, digest(deps.readOnlyApiKey))) {
    return { limiterKey: 'read-only', readOnly: true };
  }
  return undefined;
}

export function createRequestHandler(deps: ServerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    handle(deps, req, res).catch((err: unknown) => {
      deps.logger?.error({ err: err instanceof Error ? err.message : String(err) }, 'sandbox handler failed');
      if (!res.headersSent) sendError(res, 500, 'internal_error', 'the sandbox failed to answer');
      else res.destroy();
    });
  };
}

async function handle(deps: ServerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
  const parts = splitPath(url.pathname);
  if (!parts) return sendError(res, 400, 'invalid_path', 'the path is not valid percent-encoding');
  if (parts[0] === '_admin') return deps.admin(req, res, parts.slice(1), url);
  if (parts[0] === '_signed' && parts[1] === 'recording' && parts.length === 3 && req.method === 'GET') {
    return signedRecording(deps, res, parts[2] as string, url);
  }
  return api(deps, req, res, parts, url);
}

async function api(
  deps: ServerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  parts: string[],
  url: URL,
): Promise<void> {
  const { state, clock } = deps;
  const route = matchApiRoute(req.method ?? 'GET', parts);
  state.counters.received(route.endpoint);
  res.on('finish', () => state.counters.answered(res.statusCode));

  const caller = authenticate(req.headers.authorization, deps);
  if (!caller) {
    await addLatency(deps);
    req.resume();
    return sendError(res, 401, 'unauthorized', 'missing or invalid API key', {
      'www-authenticate': 'Bearer',
    });
  }

  const decision = state.limiter.tryAcquire(caller.limiterKey);
  if (!decision.allowed) {
    const retryAfter = formatRetryAfter(decision.retryAtMs, clock.now(), state.settings.retryAfterFormat);
    await addLatency(deps);
    req.resume();
    const limits = state.limits();
    return decision.reason === 'daily'
      ? sendError(
          res,
          429,
          'daily_cap_exceeded',
          `the daily cap of ${limits.dailyCap} requests is spent until 00:00 UTC`,
          headers(retryAfter),
        )
      : sendError(
          res,
          429,
          'rate_limited',
          `over ${limits.burstPerSecond} requests per second or ${limits.ratePerMinute} per minute`,
          headers(retryAfter),
        );
  }
  state.counters.acceptedAt(clock.now());

  const callId = parts[0] === 'v1' && parts[1] === 'calls' ? parts[2] : undefined;
  const scripted = state.faultScripts.take(route.endpoint, callId);
  const fault = scripted ?? decideFault(state.settings.faults, deps.random);
  await addLatency(deps);
  const run = (answer: ServerResponse): Promise<void> => {
    if (!(route.write && caller.readOnly)) return route.handle(deps, { req, res: answer, url });
    req.resume();
    sendError(answer, 403, 'forbidden', 'this API key is read-only');
    return Promise.resolve();
  };
  if (fault.kind === 'none') return run(res);
  const target = {
    clock,
    state,
    endpoint: route.endpoint,
    callId,
    write: route.write,
    scripted: !!scripted,
    run,
  };
  return injectFault(target, fault, req, res);
}

function headers(retryAfter: string | undefined): Record<string, string> {
  return retryAfter === undefined ? {} : { 'retry-after': retryAfter };
}

async function addLatency(deps: ServerDeps): Promise<void> {
  const ms = deps.state.settings.faults.latencyMs;
  if (ms > 0) await sleep(deps.clock, ms);
}

/** A signed download needs no bearer and is not an API request (no limits, not counted). */
async function signedRecording(
  deps: ServerDeps,
  res: ServerResponse,
  callId: string,
  url: URL,
): Promise<void> {
  const check = checkSignedRecording(deps.recordingKey, callId, url.searchParams, deps.clock.now());
  if (check !== 'ok') {
    return sendError(
      res,
      403,
      check === 'expired' ? 'url_expired' : 'invalid_signature',
      `the signed URL is ${check}`,
    );
  }
  const call = deps.state.getCall(callId);
  if (!call || call.durationSeconds === undefined)
    return sendError(res, 404, 'not_found', 'no such recording');
  await streamRecording(deps, res, call);
}
