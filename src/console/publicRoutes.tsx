/**
 * The console routes open to anyone: the sign-in page and the stylesheet and script. They reveal
 * nothing about calls or the worker. Sign-out is here too (signOutRoute), registered behind the
 * operator access rules so a cross-site page cannot post it.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import {
  cameOverTls,
  clearedSessionCookie,
  hostAllowed,
  isSameOrigin,
  sessionCookie,
  sessionIdOf,
  tokenMatches,
  type AccessKeys,
} from '../http/access.js';
import { createSignInThrottle, type SignInThrottle } from '../http/signInThrottle.js';
import { systemClock } from '../util/clock.js';
import { CONSOLE_CSS, CONSOLE_JS } from './assets.js';
import { sendPage } from './render.js';
import { LoginPage } from './views/login.js';

/** Two arrows in a circle: sync. SVG, which browsers take for /favicon.ico by its content type. */
const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7.5" fill="#1f6feb"/>' +
  '<path d="M4 7h6l-2-2M12 9H6l2 2" stroke="#fff" stroke-width="1.5" fill="none"/></svg>';

export function consolePublicRoutes(
  keys: AccessKeys,
  throttle: SignInThrottle = createSignInThrottle(systemClock),
): FastifyPluginAsync {
  return async (app) => {
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) =>
      done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    app.addHook('onSend', async (_req, reply) => {
      reply.header('cache-control', 'no-store');
    });

    app.get('/console/assets/console.css', async (_req, reply) =>
      reply.type('text/css; charset=utf-8').send(CONSOLE_CSS),
    );
    app.get('/console/assets/console.js', async (_req, reply) =>
      reply.type('text/javascript; charset=utf-8').send(CONSOLE_JS),
    );

    // Browsers ask for it on every page; a 404 there filled the log and the devtools console.
    app.get('/favicon.ico', async (_req, reply) => reply.type('image/svg+xml').send(FAVICON_SVG));

    app.get('/console/login', async (_req, reply) => {
      // Without ADMIN_TOKEN there is nothing to sign in with: loopback requests go straight in.
      if (keys.adminToken === undefined) return reply.redirect('/console', 303);
      return sendPage(reply, <LoginPage failed={false} />);
    });

    app.post<{ Body: { token?: string } | undefined }>('/console/login', async (req, reply) => {
      const sameSite = isSameOrigin(
        {
          origin: req.headers.origin,
          host: req.headers.host,
          secFetchSite: req.headers['sec-fetch-site'] as string | undefined,
        },
        keys.publicOrigin,
      );
      if (!hostAllowed(keys, req.headers.host)) return reply.code(421).send();
      if (!sameSite || keys.adminToken === undefined || keys.sessions === undefined) {
        return reply.code(403).send();
      }
      const client = clientOf(req, keys);
      const wait = throttle.retryAfterSeconds(client);
      if (wait !== null) {
        return reply.code(429).header('retry-after', String(wait)).send();
      }
      if (!tokenMatches(keys, String(req.body?.token ?? ''))) {
        throttle.failed(client);
        req.log.warn('console sign-in refused: wrong admin token');
        return sendPage(reply, <LoginPage failed />, 401);
      }
      // Expired rows go at each sign-in, so the table holds live sessions only.
      await keys.sessions.prune();
      const id = await keys.sessions.create();
      const cookie = sessionCookie(id, keys.sessions.expiry.absoluteSeconds, secureFor(req, keys));
      return reply.header('set-cookie', cookie).redirect('/console', 303);
    });
  };
}

/** POST /console/logout: ends the session in the database, so a copied cookie stops working too. */
export function signOutRoute(keys: AccessKeys): FastifyPluginAsync {
  return async (app) => {
    app.post('/console/logout', async (req, reply) => {
      const id = sessionIdOf(req.headers.cookie);
      if (id !== undefined) await keys.sessions?.revoke(id);
      return reply
        .header('set-cookie', clearedSessionCookie(secureFor(req, keys)))
        .redirect('/console/login', 303);
    });
  };
}

function secureFor(req: FastifyRequest, keys: AccessKeys): boolean {
  const proto = req.headers['x-forwarded-proto'];
  return cameOverTls(keys, {
    encrypted: (req.socket as { encrypted?: boolean }).encrypted === true,
    forwardedProto: Array.isArray(proto) ? proto[0] : proto,
  });
}

/** Who is guessing: the peer, or behind a trusted proxy the address it forwarded for. */
function clientOf(req: FastifyRequest, keys: AccessKeys): string {
  const forwarded = req.headers['x-forwarded-for'];
  const last = (Array.isArray(forwarded) ? forwarded.join(',') : forwarded)?.split(',').pop()?.trim();
  return keys.trustProxy && last ? last : (req.socket.remoteAddress ?? 'unknown');
}
