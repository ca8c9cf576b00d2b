import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { eventBody, signedHeaders, testServer } from './harness.js';

describe('HTTP server over a real socket', () => {
  const t = testServer();
  let base = '';

  beforeAll(async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    base = `http://127.0.0.1:${port}`;
  });
  afterAll(() => t.app.close());

  it('acks a signed event after storing it, refuses a forged one, and reports both', async () => {
    const body = eventBody({ id: 'evt_socket' });
    const ok = await request(`${base}/webhooks`, { method: 'POST', body, headers: signedHeaders(body) });
    expect(ok.statusCode).toBe(202);
    expect(await ok.body.json()).toEqual({ status: 'accepted' });
    expect(t.inbox.byId.get('evt_socket')?.rawBody).toBe(body);

    const forged = await request(`${base}/webhooks`, {
      method: 'POST',
      body,
      headers: signedHeaders(body, 'guessed-secret'),
    });
    expect(forged.statusCode).toBe(401);
    expect(await forged.body.json()).toMatchObject({ error: { code: 'WEBHOOK_BAD_SIGNATURE' } });
    expect(t.inbox.calls).toHaveLength(1);

    const metrics = await request(`${base}/metrics`);
    const text = await metrics.body.text();
    expect(text).toContain('crmsync_webhooks_received_total{type="call.started"} 1');
    expect(text).toContain('crmsync_webhook_rejections_total{reason="bad_signature"} 1');

    const health = await fetch(`${base}/healthz`);
    expect(await health.json()).toEqual({ ok: true });
  });
});
