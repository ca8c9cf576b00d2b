/**
 * Console sessions kept in the database: a random id in the cookie, idle and absolute expiry on
 * the database's clock (tests age the row, since that clock cannot be injected), `Secure` only
 * over TLS or from a trusted proxy, ended by sign-out and by a new ADMIN_TOKEN; and sign-in
 * throttling per client on the injected clock.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { accessKeys, cameOverTls, SESSION_COOKIE } from '../../src/http/access.js';
import { dbConsoleSessions, SESSION_EXPIRY } from '../../src/store/consoleSessions.js';
import type { Db } from '../../src/store/database.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { DATABASE_KINDS, useMigratedDatabase } from '../store/helpers.js';
import { operatorSurface, type OperatorSurface } from './operatorSurface.js';

const TOKEN = 'admin-token-0123456789abcdef';
const NEW_TOKEN = 'admin-token-rotated-987654321';
const REMOTE = '203.0.113.7';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe.each(DATABASE_KINDS)('console sessions (%s)', (kind) => {
  const current = useMigratedDatabase(kind);
  let surface: OperatorSurface | undefined;
  afterEach(async () => {
    await surface?.app.close();
    surface = undefined;
    await current().db.prisma.$executeRaw`DELETE FROM console_session`;
  });

  const db = (): Db => current().db.prisma;
  async function start(token = TOKEN, options: { trustProxy?: boolean; clock?: FakeClock } = {}) {
    const keys = accessKeys(token, {
      sessions: dbConsoleSessions(db(), token),
      trustProxy: options.trustProxy,
    });
    surface = await operatorSurface(db(), keys, options.clock ?? new FakeClock());
    return surface.app;
  }
  async function signIn(app: OperatorSurface['app'], headers: Record<string, string> = {}, token = TOKEN) {
    const res = await app.inject({
      method: 'POST',
      url: '/console/login',
      remoteAddress: REMOTE,
      headers: { ...FORM, ...headers },
      payload: `token=${token}`,
    });
    expect(res.statusCode).toBe(303);
    const setCookie = String(res.headers['set-cookie']);
    return { setCookie, cookie: setCookie.split(';')[0]! };
  }
  const status = (app: OperatorSurface['app'], cookie: string) =>
    app.inject({ method: 'GET', url: '/status', remoteAddress: REMOTE, headers: { cookie } });
  const age = async (column: 'last_seen_at' | 'created_at', seconds: number) =>
    db().$executeRawUnsafe(`UPDATE console_session SET ${column} = now() - interval '${seconds} seconds'`);

  it('signs in to a random id whose hash is a database row, not the token', async () => {
    const app = await start();
    const { setCookie, cookie } = await signIn(app);
    const id = cookie.slice(SESSION_COOKIE.length + 1);
    expect(id).toMatch(/^[\w-]{43}$/);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain(`Max-Age=${SESSION_EXPIRY.absoluteSeconds}`);
    expect(setCookie).not.toContain(TOKEN);
    const rows = await db().$queryRaw<{ id_hash: string }[]>`SELECT id_hash FROM console_session`;
    expect(rows).toEqual([{ id_hash: createHash('sha256').update(id).digest('hex') }]);
    expect((await status(app, cookie)).statusCode).toBe(200);
    // A second sign-in is another session, not the same cookie.
    expect((await signIn(app)).cookie).not.toBe(cookie);
  });

  it('ends a session unused for the idle expiry, and keeps one in use', async () => {
    const app = await start();
    const { cookie } = await signIn(app);
    await age('last_seen_at', SESSION_EXPIRY.idleSeconds - 60);
    expect((await status(app, cookie)).statusCode).toBe(200); // used: last_seen_at moves to now
    const [row] = await db().$queryRaw<{ idle: number }[]>`
      SELECT extract(epoch FROM now() - last_seen_at)::float AS idle FROM console_session`;
    expect(row!.idle).toBeLessThan(60);
    await age('last_seen_at', SESSION_EXPIRY.idleSeconds + 1);
    expect((await status(app, cookie)).statusCode).toBe(401);
  });

  it('ends a session at the absolute expiry however recently it was used', async () => {
    const app = await start();
    const { cookie } = await signIn(app);
    await age('created_at', SESSION_EXPIRY.absoluteSeconds - 60);
    expect((await status(app, cookie)).statusCode).toBe(200);
    await age('created_at', SESSION_EXPIRY.absoluteSeconds + 1);
    expect((await status(app, cookie)).statusCode).toBe(401);
  });

  it('sign-out deletes the session, so a copy of the cookie stops working', async () => {
    const app = await start();
    const { cookie } = await signIn(app);
    const out = await app.inject({
      method: 'POST',
      url: '/console/logout',
      remoteAddress: REMOTE,
      headers: { cookie, 'sec-fetch-site': 'same-origin' },
    });
    expect(out.statusCode).toBe(303);
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0');
    expect(await db().$queryRaw`SELECT * FROM console_session`).toEqual([]);
    expect((await status(app, cookie)).statusCode).toBe(401);
  });

  it('a new ADMIN_TOKEN ends the sessions made with the old one', async () => {
    const before = await start(TOKEN);
    const { cookie } = await signIn(before);
    await before.close();
    const after = await start(NEW_TOKEN);
    expect((await status(after, cookie)).statusCode).toBe(401);
    // What the worker does at start: the old token's rows go.
    expect(await dbConsoleSessions(db(), NEW_TOKEN).prune()).toBe(1);
    expect(await db().$queryRaw`SELECT * FROM console_session`).toEqual([]);
    expect((await status(after, (await signIn(after, {}, NEW_TOKEN)).cookie)).statusCode).toBe(200);
  });

  it('marks the cookie Secure only behind a trusted proxy that says https', async () => {
    const https = { 'x-forwarded-proto': 'https' };
    expect((await signIn(await start())).setCookie).not.toContain('Secure');
    await surface!.app.close();
    // Anyone can send the header: without TRUST_PROXY it is not believed.
    expect((await signIn(await start(TOKEN), https)).setCookie).not.toContain('Secure');
    await surface!.app.close();
    expect((await signIn(await start(TOKEN, { trustProxy: true }), https)).setCookie).toMatch(/; Secure$/);
  });
});

describe('TLS decision', () => {
  it('a TLS socket is TLS whatever the proxy setting; a forwarded https only with TRUST_PROXY', () => {
    expect(cameOverTls({ trustProxy: false }, { encrypted: true, forwardedProto: undefined })).toBe(true);
    expect(cameOverTls({ trustProxy: false }, { encrypted: false, forwardedProto: 'https' })).toBe(false);
    expect(cameOverTls({ trustProxy: true }, { encrypted: false, forwardedProto: 'https, http' })).toBe(true);
    expect(cameOverTls({ trustProxy: true }, { encrypted: false, forwardedProto: 'http' })).toBe(false);
  });
});

describe('sign-in throttling', () => {
  const current = useMigratedDatabase('embedded');

  it('refuses a client after 5 wrong tokens in a minute with 429 and Retry-After, until the minute passes', async () => {
    const clock = new FakeClock();
    const keys = accessKeys(TOKEN, { sessions: dbConsoleSessions(current().db.prisma, TOKEN) });
    const { app } = await operatorSurface(current().db.prisma, keys, clock);
    const attempt = (token: string, remoteAddress = REMOTE) =>
      app.inject({
        method: 'POST',
        url: '/console/login',
        remoteAddress,
        headers: FORM,
        payload: `token=${token}`,
      });
    try {
      for (let i = 0; i < 5; i++) {
        expect((await attempt('wrong-token-000000000')).statusCode).toBe(401);
        await clock.advance(1_000);
      }
      const refused = await attempt(TOKEN);
      expect(refused.statusCode).toBe(429);
      // The first failure leaves the window 60 s after it, 5 s have passed.
      expect(refused.headers['retry-after']).toBe('55');
      expect(refused.headers['set-cookie']).toBeUndefined();
      // Another client is not held back.
      expect((await attempt(TOKEN, '198.51.100.9')).statusCode).toBe(303);
      await clock.advance(54_000);
      expect((await attempt(TOKEN)).statusCode).toBe(429);
      await clock.advance(1_000);
      expect((await attempt(TOKEN)).statusCode).toBe(303);
    } finally {
      await app.close();
    }
  });
});
