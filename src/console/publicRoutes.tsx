/**
 * The console routes open to anyone: the sign-in page and the stylesheet and script. They reveal
 * nothing about calls or the worker.
 */
import type { FastifyPluginAsync } from 'fastify';
import { hostAllowed, isSameOrigin, sessionCookie, tokenMatches, type AccessKeys } from '../http/access.js';
import { CONSOLE_CSS, CONSOLE_JS } from './assets.js';
import { sendPage } from './render.js';
import { LoginPage } from './views/login.js';

export function consolePublicRoutes(keys: AccessKeys): FastifyPluginAsync {
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
      if (!sameSite || keys.adminToken === undefined) return reply.code(403).send();
      if (!tokenMatches(keys, String(req.body?.token ?? ''))) {
        req.log.warn('console sign-in refused: wrong admin token');
        return sendPage(reply, <LoginPage failed />, 401);
      }
      return reply.header('set-cookie', sessionCookie(keys)).redirect('/console', 303);
    });
  };
}
