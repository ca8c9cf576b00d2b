/**
 * DNS rebinding against the loopback-only console: a page on attacker.example rebinds its name to
 * 127.0.0.1, so the browser's requests come from a loopback peer with `Host: attacker.example` and
 * a matching `Origin`. Over a real socket, every operator route must refuse them.
 */
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessKeys } from '../../src/http/access.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { useMigratedDatabase } from '../store/helpers.js';
import { operatorSurface, SECRET_EMAIL, type OperatorSurface } from './operatorSurface.js';

function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const body = method === 'POST' ? 'csrf=x' : undefined;
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: {
          ...headers,
          ...(body && { 'content-type': 'application/x-www-form-urlencoded', 'content-length': body.length }),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('DNS rebinding (loopback-only mode)', () => {
  const current = useMigratedDatabase('embedded');
  let surface: OperatorSurface;
  let port: number;

  beforeAll(async () => {
    surface = await operatorSurface(current().db.prisma, accessKeys(undefined), new FakeClock());
    await surface.app.listen({ host: '127.0.0.1', port: 0 });
    port = (surface.app.server.address() as AddressInfo).port;
  });
  afterAll(() => surface.app.close());

  it('refuses /status, /console and every POST route when Host names another site', async () => {
    const posts = surface.routes.filter((r) => r.method === 'POST' && r.url !== '/webhooks');
    expect(posts.length).toBeGreaterThanOrEqual(3);
    const targets = [
      { method: 'GET', url: '/status' },
      { method: 'GET', url: '/console' },
      ...surface.routes.filter((r) => r.method === 'GET' && r.url.startsWith('/admin')),
      ...posts,
    ];
    const rebound = { host: `attacker.example:${port}`, origin: `http://attacker.example:${port}` };
    for (const { method, url } of targets) {
      const path = url.replaceAll(/:(\w+)/g, 'call_1');
      const res = await send(port, method, path, rebound);
      expect(res.status, `${method} ${path}`).toBe(421);
      expect(res.body, `${method} ${path}`).toBe('');
    }
    // The same requests under the loopback names are answered: the Host alone decided.
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
      const status = await send(port, 'GET', '/status', { host });
      expect(status.status, host).toBe(200);
      expect(status.body).toContain(SECRET_EMAIL);
    }
  });
});

describe('PUBLIC_URL (with ADMIN_TOKEN)', () => {
  const current = useMigratedDatabase('embedded');
  const TOKEN = 'admin-token-0123456789abcdef';
  let surface: OperatorSurface;
  let port: number;

  beforeAll(async () => {
    surface = await operatorSurface(
      current().db.prisma,
      accessKeys(TOKEN, { publicOrigin: 'https://crm-sync.example.com' }),
      new FakeClock(),
    );
    await surface.app.listen({ host: '127.0.0.1', port: 0 });
    port = (surface.app.server.address() as AddressInfo).port;
  });
  afterAll(() => surface.app.close());

  it('holds browser requests to its host and origin; the bearer token (the CLI) is not held to it', async () => {
    const signIn = (host: string, origin: string) => send(port, 'POST', '/console/login', { host, origin });
    expect((await signIn('attacker.example', 'https://attacker.example')).status).toBe(421);
    expect((await signIn('crm-sync.example.com', 'https://attacker.example')).status).toBe(403);
    expect((await send(port, 'GET', '/console', { host: 'attacker.example' })).status).toBe(421);
    expect((await send(port, 'GET', '/console', { host: 'crm-sync.example.com' })).status).toBe(303);
    const cli = await send(port, 'GET', '/status', {
      host: `127.0.0.1:${port}`,
      authorization: `Bearer ${TOKEN}`,
    });
    expect(cli.status).toBe(200);
  });
});
