import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Clock } from '../clock.js';
import { mergeCrmFaultRates } from '../crmFaults.js';
import { handleRest } from './rest.js';
import type { FaultSpec, SalesforceSandboxState } from './state.js';
import { RequestError, type ValidationRule } from './store.js';

const MAX_BODY_BYTES = 20 * 1024 * 1024;

interface Reply {
  status: number;
  body?: unknown;
  /** An HTML body, as a proxy in front of Salesforce sends. */
  rawBody?: string;
  headers?: Record<string, string>;
}

/**
 * Salesforce answers REST errors as a JSON array of `{message, errorCode, fields?}` (REST API
 * Developer Guide, "Status Codes and Error Responses").
 */
function errorReply(status: number, errorCode: string, message: string, fields?: string[]): Reply {
  return { status, body: [{ message, errorCode, ...(fields ? { fields } : {}) }] };
}

/**
 * REQUEST_LIMIT_EXCEEDED for the concurrent long-running API request limit ("typically 25 long
 * running API calls over 20 seconds", Salesforce Help article 000389067, whose error text this
 * is), unlike the daily TotalRequests one: it clears within seconds. The REST status and body
 * are those of any REQUEST_LIMIT_EXCEEDED (403, REST API Developer Guide, "Status Codes and Error
 * Responses").
 */
const CONCURRENT_LIMIT_MESSAGE = 'ConcurrentRequests (Concurrent API Requests) Limit exceeded.';

/** Injected 5xx: 500 UNKNOWN_EXCEPTION, 503 SERVER_UNAVAILABLE, a 502 from a proxy with no JSON. */
function serverError(status: 500 | 502 | 503): Reply {
  if (status === 502) return { status, rawBody: '<html><body>502 Bad Gateway</body></html>' };
  return status === 503
    ? errorReply(503, 'SERVER_UNAVAILABLE', 'Server temporarily unavailable')
    : errorReply(500, 'UNKNOWN_EXCEPTION', 'An unexpected error occurred');
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new RequestError(413, 'REQUEST_TOO_LARGE', 'request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new RequestError(400, 'JSON_PARSER_ERROR', 'Unexpected character in the request body');
  }
}

/** The HTTP front of the sandbox: OAuth token endpoint, REST API under any version, admin API. */
export function createSandboxServer(
  state: SalesforceSandboxState,
  clock: Clock,
  baseUrl: () => string,
): Server {
  const route = async (req: IncomingMessage): Promise<Reply> => {
    const url = new URL(req.url ?? '/', 'http://sandbox.local');
    const method = (req.method ?? 'GET').toUpperCase();
    const path = url.pathname;
    if (path.startsWith('/_admin/')) return admin(state, method, path, parseJson(await readBody(req)));
    const reply = await serve(req, method, url);
    state.recordRequest(method, path, reply.status);
    return reply;
  };

  const serve = async (req: IncomingMessage, method: string, url: URL): Promise<Reply> => {
    const path = url.pathname;
    if (path === '/services/oauth2/token' && method === 'POST') {
      const answer = state.issuer.handle(new URLSearchParams(await readBody(req)), baseUrl());
      return { status: answer.status, body: answer.body };
    }
    // The Versions resource answers without a session (REST API Developer Guide, "Versions").
    if (/^\/services\/data\/?$/.test(path) && method === 'GET') {
      return { status: 200, body: state.versions.list() };
    }
    const m = /^\/services\/data\/(v\d+\.\d)(?:\/(.*))?$/.exec(path);
    if (!m) return errorReply(404, 'NOT_FOUND', 'The requested resource does not exist');
    const unserved = state.versions.refusal(m[1]!.slice(1));
    if (unserved) return errorReply(unserved.status, unserved.errorCode, unserved.message);
    const token = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const userId = state.issuer.check(token);
    if (!userId) return errorReply(401, 'INVALID_SESSION_ID', 'Session expired or invalid');

    state.apiUsed++;
    // REST API Developer Guide, "Limit Info Header"; a spent allowance is 403 REQUEST_LIMIT_EXCEEDED
    // ("Status Codes and Error Responses").
    const limitInfo = { 'Sforce-Limit-Info': `api-usage=${state.apiUsed}/${state.apiLimit}` };
    const fault = state.takeFault(method, path);
    const faultReply = fault && errorReply(fault.status, fault.errorCode, fault.message);
    if (faultReply && !fault?.acted) return { ...faultReply, headers: limitInfo };
    if (state.apiUsed > state.apiLimit) {
      return {
        ...errorReply(403, 'REQUEST_LIMIT_EXCEEDED', 'TotalRequests Limit exceeded.'),
        headers: limitInfo,
      };
    }
    const random = state.randomFaults.decide(method, path, clock.now());
    if (random.kind === 'rate_limit') {
      // The concurrent-request limit, the REQUEST_LIMIT_EXCEEDED that clears within seconds.
      return { ...errorReply(403, 'REQUEST_LIMIT_EXCEEDED', CONCURRENT_LIMIT_MESSAGE), headers: limitInfo };
    }
    if (random.kind === 'error' && !random.acted)
      return { ...serverError(random.status), headers: limitInfo };
    // Faults that come after the request was carried out: the write happens, its answer is lost.
    const failAfter = faultReply ?? (random.kind === 'error' ? serverError(random.status) : undefined);
    try {
      const body = method === 'GET' ? undefined : parseJson(await readBody(req));
      const apiPath = `/services/data/${m[1]}`;
      const parts = (m[2] ?? '').split('/').filter(Boolean).map(decodeURIComponent);
      const todayIso = new Date(clock.now()).toISOString().slice(0, 10);
      const answer = handleRest(state, {
        method,
        parts,
        query: url.searchParams,
        body,
        userId,
        apiPath,
        todayIso,
      });
      if (failAfter) return { ...failAfter, headers: limitInfo };
      return { ...answer, headers: limitInfo };
    } catch (err) {
      if (err instanceof RequestError) {
        return { ...errorReply(err.status, err.errorCode, err.message, err.fields), headers: limitInfo };
      }
      throw err;
    }
  };

  return createServer((req: IncomingMessage, res: ServerResponse) => {
    route(req)
      .catch((err: unknown) => {
        if (err instanceof RequestError) return errorReply(err.status, err.errorCode, err.message);
        return errorReply(500, 'UNKNOWN_EXCEPTION', (err as Error).message);
      })
      .then((reply) => {
        const headers: Record<string, string> = { ...reply.headers };
        if (reply.body !== undefined) headers['Content-Type'] = 'application/json;charset=UTF-8';
        if (reply.rawBody !== undefined) headers['Content-Type'] = 'text/html;charset=UTF-8';
        res.writeHead(reply.status, headers);
        res.end(reply.rawBody ?? (reply.body === undefined ? undefined : JSON.stringify(reply.body)));
      });
  });
}

/** `/_admin/…`: read records back, count requests, inject faults, reset. Not part of Salesforce. */
function admin(state: SalesforceSandboxState, method: string, path: string, body: unknown): Reply {
  const records = /^\/_admin\/records\/([A-Za-z]+)$/.exec(path);
  if (records && method === 'GET') return { status: 200, body: state.store.all(records[1]!) };
  if (records && method === 'POST') {
    return { status: 201, body: state.store.insertRaw(records[1]!, (body ?? {}) as Record<string, unknown>) };
  }
  if (path === '/_admin/requests' && method === 'GET') {
    const counts = state.requestCounts();
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    return { status: 200, body: { total, counts, recent: state.recentRequests().slice(-200) } };
  }
  if (path === '/_admin/faults' && method === 'POST') {
    const specs = (Array.isArray(body) ? body : [body ?? {}]) as FaultSpec[];
    specs.forEach((s) => state.injectFault(s));
    return { status: 204 };
  }
  // Random faults at rates (chaos runs): `{rateLimitRate?, errorRate?, actedShare?}`.
  if (path === '/_admin/fault-rates' && method === 'POST') {
    const rates = mergeCrmFaultRates(state.randomFaults.rates, body ?? {});
    if (typeof rates === 'string') return errorReply(400, 'INVALID_FIELD', rates);
    state.randomFaults.rates = rates;
    return { status: 200, body: state.randomFaults.summary() };
  }
  if (path === '/_admin/fault-rates' && method === 'GET') {
    return { status: 200, body: { ...state.randomFaults.summary(), log: state.randomFaults.log } };
  }
  // An admin's rule that a field be filled on create (store.ts ValidationRule); DELETE lifts them all.
  if (path === '/_admin/validation-rules' && method === 'POST') {
    const rule = (body ?? {}) as Partial<ValidationRule>;
    if (!rule.object || !rule.field) return errorReply(400, 'INVALID_FIELD', 'object and field are required');
    state.store.validationRules.push({
      object: rule.object,
      field: rule.field,
      kind: rule.kind ?? 'rule',
      message: rule.message,
    });
    return { status: 204 };
  }
  if (path === '/_admin/validation-rules' && method === 'DELETE') {
    state.store.validationRules = [];
    return { status: 204 };
  }
  if (path === '/_admin/reset' && method === 'POST') {
    state.reset();
    return { status: 204 };
  }
  // Every token and grant refused (401 INVALID_SESSION_ID, invalid_grant) until restored.
  if (path === '/_admin/tokens/revoke' && method === 'POST') {
    state.issuer.revoke();
    return { status: 204 };
  }
  if (path === '/_admin/tokens/restore' && method === 'POST') {
    state.issuer.restore();
    return { status: 204 };
  }
  if (path === '/_admin/expire-tokens' && method === 'POST') {
    state.expireTokens();
    return { status: 204 };
  }
  if (path === '/_admin/api-usage' && method === 'POST') {
    const b = (body ?? {}) as { used?: number; limit?: number };
    state.setApiUsage(b.used ?? state.apiUsed, b.limit ?? state.apiLimit);
    return { status: 204 };
  }
  return errorReply(404, 'NOT_FOUND', 'unknown admin resource');
}
