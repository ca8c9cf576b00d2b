/**
 * The worker's HTTP server with its real operator routes (/status, /admin/*, the console and its
 * sign-in page) on a real database, for the access tests. Routes are collected as Fastify
 * registers them, so a test covers every route the server has rather than a list kept by hand.
 */
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { consolePublicRoutes, signOutRoute } from '../../src/console/publicRoutes.js';
import { createSignInThrottle } from '../../src/http/signInThrottle.js';
import { consoleRoutes } from '../../src/console/routes.js';
import { recordLinker } from '../../src/console/links.js';
import type { AccessKeys } from '../../src/http/access.js';
import type { Db } from '../../src/store/database.js';
import type { FakeClock } from '../../src/util/fakeClock.js';
import { adminRoutes } from '../../src/worker/adminRoutes.js';
import type { StatusSnapshot } from '../../src/ops/status.js';
import { testServer } from './harness.js';

export const SECRET_EMAIL = 'jane.doe@acme.example';

export interface OperatorSurface {
  app: FastifyInstance;
  routes: { method: string; url: string }[];
}

export async function operatorSurface(db: Db, keys: AccessKeys, clock: FakeClock): Promise<OperatorSurface> {
  const status = async () =>
    ({ recentFailures: [{ message: `no contact for ${SECRET_EMAIL}` }] }) as unknown as StatusSnapshot;
  const t = testServer({
    clock,
    access: keys,
    status,
    operatorRoutes: [
      adminRoutes({ db, crm: 'hubspot', clock, onEnqueued: () => undefined }),
      consoleRoutes({
        db,
        crm: 'hubspot',
        clock,
        status,
        links: recordLinker({
          crm: 'hubspot',
          hubspot: { baseUrl: 'https://api.hubapi.com' },
          salesforce: { instanceUrl: '', loginUrl: '', apiVersion: '62.0' },
        }),
        configDir: path.join(import.meta.dirname, '..', '..', 'config'),
        onEnqueued: () => undefined,
        csrf: keys.csrf,
        tokenConfigured: keys.adminToken !== undefined,
      }),
      signOutRoute(keys),
    ],
    publicRoutes: [consolePublicRoutes(keys, createSignInThrottle(clock))],
  });
  const routes: { method: string; url: string }[] = [];
  t.app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) if (method !== 'HEAD') routes.push({ method, url: r.url });
  });
  await t.app.ready();
  return { app: t.app, routes };
}
