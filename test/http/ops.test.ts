import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { composeReadiness } from '../../src/http/readiness.js';
import { testServer } from './harness.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

function setup(...args: Parameters<typeof testServer>) {
  const t = testServer(...args);
  app = t.app;
  return t;
}

describe('operator endpoints', () => {
  it('refuses a route that declares a JSON schema: no Ajv is loaded to check it (zod checks bodies)', async () => {
    const { app } = setup();
    app.post('/checked', { schema: { body: { type: 'object' } } }, async () => ({ ok: true }));
    await expect(app.ready()).rejects.toThrow(/declare no JSON schema/);
  });

  it('GET /healthz answers 200 {ok:true}', async () => {
    const { app } = setup();
    const res = await app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('GET /readyz answers 200 with the report when every check passes', async () => {
    const readiness = composeReadiness({
      database: async () => ({ ok: true }),
      service: async () => ({ ok: true, detail: 'reachable' }),
    });
    const { app } = setup({ readiness });
    const res = await app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      ready: true,
      checks: { database: { ok: true }, service: { ok: true, detail: 'reachable' } },
    });
  });

  it('GET /readyz answers 503 naming the failing check, in its advice rather than the error text', async () => {
    const readiness = composeReadiness(
      {
        database: async () => ({ ok: true }),
        apiKey: async () => ({ ok: false, detail: 'Service answered 401: key invalid or rotated' }),
        service: async () => {
          throw new Error('connect ECONNREFUSED 127.0.0.1:9');
        },
      },
      { advice: { service: 'the Service is unreachable: check SERVICE_API_BASE_URL' } },
    );
    const { app } = setup({ readiness });
    const res = await app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({
      ready: false,
      checks: {
        database: { ok: true },
        apiKey: { ok: false, detail: 'Service answered 401: key invalid or rotated' },
        service: { ok: false, detail: 'the Service is unreachable: check SERVICE_API_BASE_URL' },
      },
    });
  });

  it('GET /readyz answers 503 when the readiness function itself throws', async () => {
    const { app } = setup({
      readiness: async () => {
        throw new Error('boom');
      },
    });
    const res = await app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ ready: false });
  });

  it('GET /status answers the JSON of deps.status()', async () => {
    const { app } = setup({ status: async () => ({ calls: { synced: 3 }, budget: { usedToday: 12 } }) });
    const res = await app.inject({ method: 'GET', url: '/status' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ calls: { synced: 3 }, budget: { usedToday: 12 } });
  });

  it('GET /status answers 500 STATUS_UNAVAILABLE when the source fails', async () => {
    const { app } = setup({
      status: async () => {
        throw new Error('db down');
      },
    });
    const res = await app.inject({ method: 'GET', url: '/status' });
    expect(res.statusCode).toBe(500);
    expect(res.json().error.code).toBe('STATUS_UNAVAILABLE');
  });

  it('GET /metrics answers Prometheus text', async () => {
    const { app, metrics } = setup();
    metrics.jobs.inc({ kind: 'writeback', outcome: 'done' });
    const res = await app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.body).toContain('# TYPE crmsync_jobs_total counter');
    expect(res.body).toContain('crmsync_jobs_total{kind="writeback",outcome="done"} 1');
  });

  it('unknown routes answer 404 with a JSON error', async () => {
    const { app } = setup();
    const res = await app.inject({ method: 'GET', url: '/nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'no such route' } });
  });
});
