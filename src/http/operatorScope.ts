/**
 * The operator surface (/status, /admin/*, /console) as one Fastify scope behind the access rules
 * of access.ts, with the CSRF checks for state-changing requests. Routes registered inside
 * `operatorScope` can assume an authorised, same-site caller.
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { csrfMatches, decideAccess, hostAllowed, isSameOrigin, type AccessKeys } from './access.js';
import { errorBody } from './errors.js';

const viaOf = new WeakMap<FastifyRequest, 'token' | 'session' | 'loopback'>();

/** Registers `routes` behind the operator access rules. */
export function operatorScope(keys: AccessKeys, routes: FastifyPluginAsync[]): FastifyPluginAsync {
  return async (scope: FastifyInstance) => {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string' },
      (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    scope.addHook('onRequest', async (req, reply) => {
      reply.header('cache-control', 'no-store');
      const decision = await decideAccess(keys, {
        authorization: req.headers.authorization,
        cookie: req.headers.cookie,
        remoteAddress: req.socket.remoteAddress,
        forwarded:
          (req.headers['x-forwarded-for'] ?? req.headers.forwarded ?? req.headers['x-real-ip']) !== undefined,
      });
      // A name the surface does not answer as (DNS rebinding): nothing, not even a sign-in page.
      if (!(decision.allowed && decision.via === 'token') && !hostAllowed(keys, req.headers.host)) {
        return reply.code(421).send();
      }
      if (decision.allowed) {
        viaOf.set(req, decision.via);
        return;
      }
      if (decision.reason === 'sign_in') {
        if (req.method === 'GET' && req.url.startsWith('/console')) {
          return reply.redirect('/console/login', 303);
        }
        return reply
          .code(401)
          .send(errorBody('ADMIN_SIGN_IN_REQUIRED', 'sign in with the admin token (ADMIN_TOKEN)'));
      }
      return reply
        .code(403)
        .send(
          errorBody(
            'ADMIN_LOOPBACK_ONLY',
            'without ADMIN_TOKEN this answers direct loopback requests only; set ADMIN_TOKEN to reach it from elsewhere',
          ),
        );
    });
    scope.addHook('preHandler', async (req, reply) => {
      if (req.method === 'GET' || req.method === 'HEAD') return;
      // A bearer token is not ambient: a cross-site page cannot make the browser send it.
      if (viaOf.get(req) === 'token') return;
      if (!crossSiteSafe(req, keys)) return refuseCrossSite(reply);
    });
    for (const routes_ of routes) await scope.register(routes_);
  };
}

function crossSiteSafe(req: FastifyRequest, keys: AccessKeys): boolean {
  const sameOrigin = isSameOrigin(
    { origin: req.headers.origin, host: req.headers.host, secFetchSite: header(req, 'sec-fetch-site') },
    keys.publicOrigin,
  );
  if (!sameOrigin) return false;
  // Forms are what a cross-site page can post without a preflight: they must carry the CSRF token.
  if (req.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
    return csrfMatches(keys, (req.body as Record<string, unknown> | undefined)?.csrf);
  }
  return true;
}

function refuseCrossSite(reply: FastifyReply) {
  return reply
    .code(403)
    .send(errorBody('ADMIN_CROSS_SITE', 'refused: the request did not come from this site'));
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
