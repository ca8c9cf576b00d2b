import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { accessKeys, decideAccess, isSameOrigin, SESSION_COOKIE } from '../../src/http/access.js';
import { dbConsoleSessions } from '../../src/store/consoleSessions.js';
import { useMigratedDatabase } from '../store/helpers.js';
import { testServer } from './harness.js';

const TOKEN = 'admin-token-0123456789abcdef';
const EMAIL = 'jane.doe@acme.example';
// The status a worker could answer: a failure message naming a participant.
const status = async () => ({ recentFailures: [{ message: `no contact for ${EMAIL}` }] });

const database = useMigratedDatabase('embedded');
const sessionsOf = (token: string) => dbConsoleSessions(database().db.prisma, token);

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

function server(adminToken: string | undefined) {
  const t = testServer({
    status,
    access: accessKeys(adminToken, {
      sessions: adminToken === undefined ? undefined : sessionsOf(adminToken),
    }),
    operatorRoutes: [
      async (scope) => {
        scope.get('/admin/calls/:id', async () => ({ participantEmail: EMAIL }));
        scope.post('/admin/replay', async () => ({ callIds: ['c1'] }));
        scope.get('/console', async () => `<p>${EMAIL}</p>`);
      },
    ],
  });
  app = t.app;
  return t.app;
}

const REMOTE = '203.0.113.7';
const PATHS = ['/status', '/admin/calls/c1', '/console'];

describe('operator surface access', () => {
  it('without ADMIN_TOKEN, answers nothing to a non-loopback client', async () => {
    const app = server(undefined);
    for (const url of PATHS) {
      const res = await app.inject({ method: 'GET', url, remoteAddress: REMOTE });
      expect(res.statusCode, url).toBe(403);
      expect(res.body, url).not.toContain(EMAIL);
      expect(res.json().error.code).toBe('ADMIN_LOOPBACK_ONLY');
    }
    const post = await app.inject({
      method: 'POST',
      url: '/admin/replay',
      remoteAddress: REMOTE,
      payload: {},
    });
    expect(post.statusCode).toBe(403);
  });

  it('without ADMIN_TOKEN, refuses loopback requests relayed by a proxy', async () => {
    const app = server(undefined);
    const res = await app.inject({ method: 'GET', url: '/status', headers: { 'x-forwarded-for': REMOTE } });
    expect(res.statusCode).toBe(403);
    expect(res.body).not.toContain(EMAIL);
  });

  it('without ADMIN_TOKEN, answers a direct loopback client', async () => {
    const app = server(undefined);
    const res = await app.inject({ method: 'GET', url: '/status', remoteAddress: '127.0.0.1' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain(EMAIL);
  });

  it('with ADMIN_TOKEN, refuses even loopback clients without the token, and a wrong token', async () => {
    const app = server(TOKEN);
    for (const remoteAddress of ['127.0.0.1', REMOTE]) {
      for (const url of ['/status', '/admin/calls/c1']) {
        const res = await app.inject({ method: 'GET', url, remoteAddress });
        expect(res.statusCode).toBe(401);
        expect(res.body).not.toContain(EMAIL);
      }
      const wrong = await app.inject({
        method: 'GET',
        url: '/status',
        remoteAddress,
        headers: { authorization: `Bearer ${TOKEN}x` },
      });
      expect(wrong.statusCode).toBe(401);
    }
    const page = await app.inject({ method: 'GET', url: '/console', remoteAddress: REMOTE });
    expect(page.statusCode).toBe(303);
    expect(page.headers.location).toBe('/console/login');
    expect(page.body).not.toContain(EMAIL);
  });

  it('with ADMIN_TOKEN, answers the bearer token (the CLI) from anywhere', async () => {
    const app = server(TOKEN);
    const res = await app.inject({
      method: 'GET',
      url: '/status',
      remoteAddress: REMOTE,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('with ADMIN_TOKEN, answers the session cookie, but refuses its cross-site posts', async () => {
    const app = server(TOKEN);
    const cookie = `${SESSION_COOKIE}=${await sessionsOf(TOKEN).create()}`;
    const get = await app.inject({
      method: 'GET',
      url: '/console',
      remoteAddress: REMOTE,
      headers: { cookie },
    });
    expect(get.statusCode).toBe(200);
    const crossSite = await app.inject({
      method: 'POST',
      url: '/admin/replay',
      remoteAddress: REMOTE,
      headers: { cookie, origin: 'https://evil.example', host: 'crm-sync.internal:8080' },
      payload: {},
    });
    expect(crossSite.statusCode).toBe(403);
    expect(crossSite.json().error.code).toBe('ADMIN_CROSS_SITE');
    const formWithoutCsrf = await app.inject({
      method: 'POST',
      url: '/admin/replay',
      remoteAddress: REMOTE,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'failed=true',
    });
    expect(formWithoutCsrf.statusCode).toBe(403);
    const formWithCsrf = await app.inject({
      method: 'POST',
      url: '/admin/replay',
      remoteAddress: REMOTE,
      headers: {
        cookie,
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': 'same-origin',
      },
      payload: `failed=true&csrf=${accessKeys(TOKEN).csrf}`,
    });
    expect(formWithCsrf.statusCode).toBe(200);
  });

  it('a session made with another token is refused', async () => {
    const app = server(TOKEN);
    const cookie = `${SESSION_COOKIE}=${await sessionsOf('another-token-0123456789').create()}`;
    const res = await app.inject({
      method: 'GET',
      url: '/status',
      remoteAddress: REMOTE,
      headers: { cookie },
    });
    expect(res.statusCode).toBe(401);
  });

  it('sets the security headers on every response, the open ones included', async () => {
    const app = server(TOKEN);
    for (const url of ['/healthz', '/status', '/metrics', '/nope']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.headers['content-security-policy'], url).toContain("script-src 'self'");
      expect(res.headers['content-security-policy'], url).toContain("frame-ancestors 'none'");
      expect(res.headers['content-security-policy'], url).not.toContain('unsafe-inline');
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
      expect(res.headers['x-frame-options'], url).toBe('DENY');
    }
  });

  it('keeps /healthz, /readyz and /metrics open', async () => {
    const app = server(TOKEN);
    for (const url of ['/healthz', '/readyz', '/metrics']) {
      expect((await app.inject({ method: 'GET', url, remoteAddress: REMOTE })).statusCode, url).toBe(200);
    }
  });
});

describe('access decisions', () => {
  it('never answers a forwarded request by loopback alone', async () => {
    expect(
      (await decideAccess(accessKeys(undefined), { remoteAddress: '::1', forwarded: true })).allowed,
    ).toBe(false);
    expect(
      (await decideAccess(accessKeys(undefined), { remoteAddress: '::1', forwarded: false })).allowed,
    ).toBe(true);
  });
  it('judges the origin of a state-changing request', () => {
    expect(isSameOrigin({ host: 'h:1' })).toBe(true);
    expect(isSameOrigin({ host: 'h:1', origin: 'http://h:1', secFetchSite: 'same-origin' })).toBe(true);
    expect(isSameOrigin({ host: 'h:1', origin: 'http://evil:1' })).toBe(false);
    expect(isSameOrigin({ host: 'h:1', secFetchSite: 'cross-site' })).toBe(false);
    expect(isSameOrigin({ host: 'h:1', origin: 'null' })).toBe(false);
  });
});
