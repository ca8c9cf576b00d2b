import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { systemClock, type Clock } from '../clock.js';
import { CrmFaultInjector, NO_CRM_FAULTS, type CrmFaultRates } from '../crmFaults.js';
import { seededRandom } from '../service/rng.js';
import { SandboxAuth, type OAuthApp } from './auth.js';
import type { SandboxState } from './context.js';
import { errorBody, rateLimitBody, SandboxHttpError } from './errors.js';
import { Faults, RateLimits, RequestLog, type RateLimitOptions } from './limits.js';
import { registerAdmin } from './routes/admin.js';
import { registerAssociations } from './routes/associations.js';
import { registerBatchUpdate } from './routes/batchUpdate.js';
import { registerObjectReads } from './routes/objectReads.js';
import { registerObjectWrites } from './routes/objectWrites.js';
import { registerProperties } from './routes/properties.js';
import { missingScopesBody, requiredScope } from './scopes.js';
import { seed } from './seed.js';
import { COUNTS_DIR_ENV, PrefixCounts } from './prefixCounts.js';
import { classifyPath, DATED_VERSIONS, datedEquivalent, TOKEN_PATH } from './versions.js';
import { HubSpotStore } from './store.js';

export type { SandboxState } from './context.js';
export { SEED_IDS } from './seed.js';

export interface HubSpotSandboxOptions {
  port?: number;
  host?: string;
  /** The private-app token accepted as Bearer (default `pat-na1-sandbox-token`). */
  accessToken?: string;
  /** The OAuth app whose refresh token `/oauth/2026-03/token` accepts; access tokens live 30 min by default. */
  oauth?: Partial<OAuthApp> & { accessTokenTtlMs?: number };
  clock?: Clock;
  /** Defaults: 100 requests per 10 s window, 250,000 per day (private-app tokens only). */
  limits?: RateLimitOptions;
  /** Seed the crm-sync custom properties (default true; false to exercise `doctor --fix`). */
  withCustomProperties?: boolean;
  /** Send X-HubSpot-RateLimit-* on search responses too (default false, as reported for HubSpot). */
  searchRateLimitHeaders?: boolean;
  /** Random TEN_SECONDLY_ROLLING 429s and 5xx at these rates (default none). */
  faultRates?: Partial<CrmFaultRates>;
  /** Seed of the random fault draws (default 42). */
  faultSeed?: number;
  /**
   * Also serve the numbered-version paths (`/crm/v3/...`, `/crm/v4/...`, `/oauth/v1/token`) as their
   * dated equivalents. Off by default: a legacy request is then answered 410, so a test that makes
   * one fails (HubSpot ends their support in 2027; see versions.ts).
   */
  legacyPaths?: boolean;
  /**
   * The scopes the credentials were granted (default: every scope); a request needing another is
   * answered 403 MISSING_SCOPES (scopes.ts). Also settable with `PUT /_admin/scopes`.
   */
  scopes?: string[];
  /** Where to write the request counts by path prefix (default: $HUBSPOT_SANDBOX_COUNTS_DIR; null: nowhere). */
  countsDir?: string | null;
}

export interface HubSpotSandbox {
  url: string;
  port: number;
  accessToken: string;
  oauth: OAuthApp;
  state: SandboxState;
  close(): Promise<void>;
}

/** Starts the HubSpot sandbox on `host:port` (port 0 = any free port). */
export async function startHubSpotSandbox(opts: HubSpotSandboxOptions = {}): Promise<HubSpotSandbox> {
  const clock = opts.clock ?? systemClock;
  const accessToken = opts.accessToken ?? 'pat-na1-sandbox-token';
  const oauth: OAuthApp = {
    clientId: opts.oauth?.clientId ?? 'sandbox-client-id',
    clientSecret: opts.oauth?.clientSecret ?? 'sandbox-client-secret',
    refreshToken: opts.oauth?.refreshToken ?? 'sandbox-refresh-token',
  };
  const store = new HubSpotStore(clock);
  const state: SandboxState = {
    clock,
    store,
    auth: new SandboxAuth(clock, accessToken, oauth, opts.oauth?.accessTokenTtlMs ?? 1_800_000),
    limits: new RateLimits(clock, opts.limits),
    faults: new Faults(),
    randomFaults: new CrmFaultInjector(
      { ...NO_CRM_FAULTS, ...opts.faultRates },
      seededRandom(opts.faultSeed ?? 42),
    ),
    requests: new RequestLog(),
    prefixCounts: new PrefixCounts(
      opts.legacyPaths ?? false,
      opts.countsDir === null ? undefined : (opts.countsDir ?? process.env[COUNTS_DIR_ENV]),
      `hubspot-${process.pid}-${randomUUID()}`,
    ),
    legacyPaths: opts.legacyPaths ?? false,
    scopes: opts.scopes ? new Set(opts.scopes) : undefined,
    refs: {
      contacts: {} as SandboxState['refs']['contacts'],
      companies: {} as SandboxState['refs']['companies'],
      deals: {},
    },
    searchRateLimitHeaders: opts.searchRateLimitHeaders ?? false,
    reset(options = {}) {
      store.clear(options.withCustomProperties ?? true);
      state.refs = seed(store);
      state.limits.reset();
      state.faults.clear();
      state.requests.clear();
      state.auth.reset();
    },
  };
  state.reset({ withCustomProperties: opts.withCustomProperties ?? true });

  const app = buildApp(state);
  await app.listen({ port: opts.port ?? 0, host: opts.host ?? '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : Number(opts.port ?? 0);
  const host = opts.host ?? '127.0.0.1';
  const close = async () => {
    await app.close();
    state.prefixCounts.flush();
  };
  return { url: `http://${host}:${port}`, port, accessToken, oauth, state, close };
}

function buildApp(state: SandboxState): FastifyInstance {
  const app = Fastify({
    logger: false,
    bodyLimit: 32 * 1024 * 1024,
    // With `legacyPaths`, a numbered-version path is served by its dated route (counted first).
    rewriteUrl: (req) => {
      const url = req.url ?? '/';
      return state.legacyPaths && classifyPath(url).kind === 'legacy'
        ? datedEquivalent(url, DATED_VERSIONS.at(-1)!)
        : url;
    },
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(String(body))));
  });

  // Requests that run and then answer a 5xx anyway (a server failing after it acted).
  const failAfter = new WeakMap<FastifyRequest, number>();
  app.addHook('onRequest', async (req, reply) => {
    const original = req.originalUrl.split('?')[0] ?? req.originalUrl;
    if (original.startsWith('/_admin')) return;
    const kind = state.prefixCounts.add(original);
    if (kind.kind === 'legacy' && !state.legacyPaths) {
      return reply
        .code(410)
        .send(
          errorBody(
            'LEGACY_API_PATH',
            `${original} is a numbered-version path; use the date-versioned API (e.g. /crm/objects/2026-09/...)`,
          ),
        );
    }
    if (kind.kind === 'dated' && !DATED_VERSIONS.includes(kind.version!)) {
      return reply.code(404).send(errorBody('OBJECT_NOT_FOUND', `Unknown API version ${kind.version}`));
    }
    return gate(state, req, reply, failAfter);
  });
  app.addHook('onSend', async (req, reply, payload) => {
    const status = failAfter.get(req);
    if (status === undefined) return payload;
    reply.code(status).header('content-type', 'application/json; charset=utf-8');
    return JSON.stringify(errorBody('INTERNAL_ERROR', 'internal error'));
  });
  app.addHook('onResponse', async (req, reply) => {
    const path = req.url.split('?')[0] ?? req.url;
    if (path.startsWith('/_admin')) return;
    state.requests.add({ method: req.method, path, status: reply.statusCode, at: state.clock.now() });
  });

  app.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => {
    if (err instanceof SandboxHttpError) return reply.code(err.statusCode).send(err.body);
    if (err.statusCode && err.statusCode < 500) {
      return reply.code(err.statusCode).send(errorBody('VALIDATION_ERROR', err.message));
    }
    return reply.code(500).send(errorBody('INTERNAL_ERROR', 'internal error'));
  });
  app.setNotFoundHandler((req, reply) => {
    reply
      .code(404)
      .send(errorBody('OBJECT_NOT_FOUND', `No route for ${req.method} ${req.url.split('?')[0]}`));
  });

  registerObjectReads(app, state);
  registerObjectWrites(app, state);
  registerBatchUpdate(app, state);
  registerAssociations(app, state);
  registerProperties(app, state);
  registerAdmin(app, state);
  return app;
}

/** Auth, injected faults and the rate limits, in that order, before any route runs. */
async function gate(
  state: SandboxState,
  req: FastifyRequest,
  reply: FastifyReply,
  failAfter: WeakMap<FastifyRequest, number>,
) {
  const path = req.url.split('?')[0] ?? req.url;
  if (path.startsWith('/_admin')) return;
  if (path === TOKEN_PATH) {
    const fault = state.faults.take(path);
    if (fault) return reply.code(fault.status).send(errorBody('INTERNAL_ERROR', 'injected fault'));
    return;
  }
  const auth = state.auth.check(req.headers.authorization);
  if (!auth.ok) return reply.code(401).send(auth.body);
  const scope = requiredScope(req.method, path);
  if (scope && state.scopes && !state.scopes.has(scope))
    return reply.code(403).send(missingScopesBody(scope));
  const daily = !auth.oauth; // OAuth apps have no daily limit and no Daily headers
  const search = req.method === 'POST' && SEARCH_PATH.test(path);
  // Search answers, 429s included, carry no X-HubSpot-RateLimit-* headers: the headers describe
  // the ten-second window, which excludes searches (see limits.ts).
  const withHeaders = state.searchRateLimitHeaders || !search;
  const fault = state.faults.take(path);
  // A queued 5xx with `acted` lets the route run, then answers the 5xx (set once the limits pass).
  let failStatus = fault?.acted && fault.status >= 500 ? fault.status : undefined;
  if (fault && failStatus === undefined) {
    // An injected ten-second or daily 429 reports the window, as those limits' answers do.
    const limitFault = fault.status === 429 && fault.policyName !== 'SECONDLY';
    if (withHeaders || limitFault) reply.headers(state.limits.current(auth.app, daily));
    if (fault.status === 429)
      return reply.code(429).send(rateLimitBody(fault.policyName ?? 'TEN_SECONDLY_ROLLING'));
    if (fault.status === 401)
      return reply.code(401).send(errorBody('EXPIRED_AUTHENTICATION', 'injected expiry'));
    return reply.code(fault.status).send(errorBody('INTERNAL_ERROR', 'injected fault'));
  }
  const verdict = state.limits.take(auth.app, daily, search);
  if (withHeaders) reply.headers(verdict.headers);
  if (!verdict.allowed) return reply.code(429).send(rateLimitBody(verdict.policy ?? 'TEN_SECONDLY_ROLLING'));
  // Random faults come after the limiter: the request took its slot, as on a busy HubSpot.
  const random = state.randomFaults.decide(req.method, path, state.clock.now());
  if (random.kind === 'rate_limit') {
    if (withHeaders) reply.headers(state.limits.current(auth.app, daily));
    return reply.code(429).send(rateLimitBody(search ? 'SECONDLY' : 'TEN_SECONDLY_ROLLING'));
  }
  if (random.kind === 'error') {
    if (!random.acted) return reply.code(random.status).send(errorBody('INTERNAL_ERROR', 'internal error'));
    failStatus = random.status;
  }
  if (failStatus !== undefined) failAfter.set(req, failStatus);
}

/** `POST /crm/objects/{version}/{objectType}/search`, the endpoints under the search limit. */
const SEARCH_PATH = /^\/crm\/objects\/[^/]+\/[^/]+\/search$/;
