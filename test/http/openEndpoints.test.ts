/**
 * Every route that answers without credentials, found from the server itself (not a list kept
 * here), says nothing of a Service error that carries a participant's email and a call id: /readyz
 * names the failing dependency and the setting to check; the detail is behind the admin access.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { accessKeys } from '../../src/http/access.js';
import { consolePublicRoutes } from '../../src/console/publicRoutes.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { READINESS_ADVICE, workerReadiness } from '../../src/worker/readinessChecks.js';
import { testServer } from './harness.js';

const TOKEN = 'admin-token-0123456789abcdef';
const EMAIL = 'jane.doe@acme.example';
const CALL_ID = 'call_7f3a9c';
const LAST_ERROR = `SERVICE_TRANSIENT: GET /v1/calls/${CALL_ID} answered 503: no participant ${EMAIL}`;

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function serverWithRoutes(adminToken: string | undefined) {
  const keys = accessKeys(adminToken);
  const readiness = workerReadiness({
    pingDatabase: async () => {
      throw new Error(`relation for ${EMAIL} (${CALL_ID}) could not be read`);
    },
    serviceHealth: () => ({ unauthorized: false, lastError: LAST_ERROR }),
    crm: () => ({ ok: true }),
    clock: new FakeClock(),
  });
  const t = testServer({
    access: keys,
    readiness,
    status: async () => ({ worker: { serviceLastError: LAST_ERROR } }),
    operatorRoutes: [
      async (scope) => {
        scope.get('/console', async () => `<p>${EMAIL} ${CALL_ID}</p>`);
      },
    ],
    publicRoutes: [consolePublicRoutes(keys)],
  });
  app = t.app;
  const routes: { method: string; url: string }[] = [];
  t.app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) if (method !== 'HEAD') routes.push({ method, url: r.url });
  });
  await t.app.ready();
  return { app: t.app, routes };
}

describe('open endpoints and a Service error naming a participant', () => {
  it('no unauthenticated answer of any route carries the email or the call id', async () => {
    const { app, routes } = await serverWithRoutes(TOKEN);
    expect(routes.map((r) => `${r.method} ${r.url}`)).toEqual(
      expect.arrayContaining([
        'GET /readyz',
        'GET /healthz',
        'GET /metrics',
        'GET /status',
        'POST /webhooks',
      ]),
    );
    const answered: string[] = [];
    for (const { method, url } of routes) {
      const path = url.replaceAll(/:(\w+)/g, CALL_ID);
      for (const remoteAddress of ['203.0.113.7', '127.0.0.1']) {
        const res = await app.inject({ method: method as 'GET', url: path, remoteAddress });
        const seen = `${JSON.stringify(res.headers)}\n${res.body}`;
        expect(seen, `${method} ${path}`).not.toContain(EMAIL);
        expect(seen, `${method} ${path}`).not.toContain(LAST_ERROR.slice(0, 30));
        if (!path.includes(CALL_ID)) expect(seen, `${method} ${path}`).not.toContain(CALL_ID);
        if (res.statusCode < 400) answered.push(`${method} ${path}`);
      }
    }
    // The routes really answered: the check above read real pages, not only refusals.
    expect(answered).toEqual(expect.arrayContaining(['GET /healthz', 'GET /metrics', 'GET /console/login']));
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({
      ready: false,
      checks: {
        database: { ok: false, detail: READINESS_ADVICE.database },
        service: { ok: false, detail: READINESS_ADVICE.service },
        crm: { ok: true },
      },
    });
    // The detail is there for the admin.
    const status = await app.inject({
      method: 'GET',
      url: '/status',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(status.body).toContain(EMAIL);
  });
});
