import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { InboxRecord } from '../../src/http/types.js';
import { STORE_RETRY_AFTER_S, STORE_TIMEOUT_MS } from '../../src/http/webhookRoute.js';
import { CURRENT_SECRET, PREVIOUS_SECRET, eventBody, signedHeaders, testServer } from './harness.js';

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

const post = (a: FastifyInstance, payload: string | Buffer, headers: Record<string, string>) =>
  a.inject({ method: 'POST', url: '/webhooks', payload, headers });

describe('POST /webhooks, signature', () => {
  it('accepts an event signed with the current secret and stores it before answering', async () => {
    const { app, inbox, clock } = setup();
    const body = eventBody();
    const res = await post(app, body, signedHeaders(body));
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ status: 'accepted' });
    expect(inbox.calls).toEqual<InboxRecord[]>([
      {
        eventId: 'evt_001',
        type: 'call.started',
        callId: 'call_42',
        rawBody: body,
        outcome: 'accepted',
        receivedAt: clock.now(),
        // The validated event rides along, so the inbox does not parse the body again.
        event: JSON.parse(body) as InboxRecord['event'],
      },
    ]);
  });

  it('accepts an event signed with the previous secret', async () => {
    const { app, inbox } = setup();
    const body = eventBody();
    const res = await post(app, body, signedHeaders(body, PREVIOUS_SECRET));
    expect(res.statusCode).toBe(202);
    expect(inbox.calls).toHaveLength(1);
  });

  it('accepts the sha256= prefix', async () => {
    const { app } = setup();
    const body = eventBody();
    const headers = signedHeaders(body);
    headers['x-service-signature'] = `sha256=${headers['x-service-signature']}`;
    expect((await post(app, body, headers)).statusCode).toBe(202);
  });

  it('verifies the exact bytes: whitespace and non-ASCII kept, stored verbatim', async () => {
    const { app, inbox } = setup();
    const body = `{ "id":"evt_ü", "type":"call.completed",\n "created_at":"2026-01-01T12:00:00Z", "data":{"call_id":"c1"} }`;
    const res = await post(app, Buffer.from(body, 'utf8'), signedHeaders(Buffer.from(body, 'utf8')));
    expect(res.statusCode).toBe(202);
    expect(inbox.calls[0]?.rawBody).toBe(body);
    expect(inbox.calls[0]?.eventId).toBe('evt_ü');
  });

  it('takes bodies under any content type (the signature is the authority)', async () => {
    const { app } = setup();
    const body = eventBody();
    const plain = { ...signedHeaders(body), 'content-type': 'text/plain' };
    const charset = { ...signedHeaders(body), 'content-type': 'application/json; charset=utf-8' };
    const none: Record<string, string> = {
      'x-service-signature': signedHeaders(body)['x-service-signature']!,
    };
    expect((await post(app, body, plain)).statusCode).toBe(202);
    expect((await post(app, body, charset)).statusCode).toBe(200); // same id again: duplicate
    expect((await post(app, body, none)).statusCode).toBe(200);
  });

  it('rejects a wrong signature with 401, stores nothing, and never logs the signature', async () => {
    const { app, inbox, logLines } = setup();
    const body = eventBody();
    const headers = signedHeaders(body, 'whsec_someone_else');
    const res = await post(app, body, headers);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({
      error: { code: 'WEBHOOK_BAD_SIGNATURE', message: 'signature missing or invalid' },
    });
    expect(inbox.calls).toEqual([]);
    const warn = logLines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.level === 40);
    expect(warn).toMatchObject({ reason: 'mismatch', msg: 'webhook rejected: bad signature' });
    const all = logLines.join('\n');
    expect(all).not.toContain(headers['x-service-signature']);
    expect(all).not.toContain(CURRENT_SECRET);
    expect(all).not.toContain(PREVIOUS_SECRET);
  });

  it('rejects a missing signature with 401 and stores nothing', async () => {
    const { app, inbox } = setup();
    const res = await post(app, eventBody(), { 'content-type': 'application/json' });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('WEBHOOK_BAD_SIGNATURE');
    expect(inbox.calls).toEqual([]);
  });

  it('rejects a signature over other bytes (body altered after signing)', async () => {
    const { app, inbox } = setup();
    const headers = signedHeaders(eventBody());
    const res = await post(app, eventBody({ id: 'evt_forged' }), headers);
    expect(res.statusCode).toBe(401);
    expect(inbox.calls).toEqual([]);
  });

  it('answers 503 and stores nothing when no secret is configured', async () => {
    const { app, inbox } = setup({ webhookSecrets: ['', ''] });
    const body = eventBody();
    const res = await post(app, body, signedHeaders(body, ''));
    expect(res.statusCode).toBe(503);
    expect(res.json().error.code).toBe('WEBHOOK_NOT_CONFIGURED');
    expect(inbox.calls).toEqual([]);
  });
});

describe('POST /webhooks, body limit', () => {
  it('answers 413 with a JSON error for a body over maxBodyBytes, storing nothing', async () => {
    const { app, inbox } = setup({ maxBodyBytes: 256 });
    const body = eventBody({ padding: 'x'.repeat(300) });
    const res = await post(app, body, signedHeaders(body));
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ error: { code: 'WEBHOOK_TOO_LARGE', message: 'body exceeds 256 bytes' } });
    expect(inbox.calls).toEqual([]);
  });

  it('accepts a body of exactly maxBodyBytes', async () => {
    const base = eventBody({ padding: '' });
    const { app } = setup({ maxBodyBytes: base.length + 10 });
    const body = eventBody({ padding: 'y'.repeat(10) });
    expect(Buffer.byteLength(body)).toBe(base.length + 10);
    expect((await post(app, body, signedHeaders(body))).statusCode).toBe(202);
  });
});

describe('POST /webhooks, authentic but unusable bodies', () => {
  it('stores malformed JSON as rejected with the reason and answers 202', async () => {
    const { app, inbox } = setup();
    const body = '{"id":"evt_9", "type":';
    const res = await post(app, body, signedHeaders(body));
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({
      status: 'rejected',
      reason: expect.stringMatching(/^malformed JSON: /),
    });
    expect(inbox.calls).toHaveLength(1);
    expect(inbox.calls[0]).toMatchObject({
      eventId: null,
      type: null,
      callId: null,
      rawBody: body,
      outcome: 'rejected',
      rejectReason: expect.stringMatching(/^malformed JSON: /),
    });
  });

  it('stores an event failing validation as rejected, keeping the ids it has', async () => {
    const { app, inbox } = setup();
    const body = eventBody({ data: {} });
    const res = await post(app, body, signedHeaders(body));
    expect(res.statusCode).toBe(202);
    const reply = res.json() as { status: string; reason: string };
    expect(reply.status).toBe('rejected');
    expect(reply.reason).toMatch(/^invalid event: /);
    expect(reply.reason).toMatch(/^invalid event: .*data\.call_id/);
    expect(inbox.calls[0]).toMatchObject({
      eventId: 'evt_001',
      type: 'call.started',
      callId: null,
      outcome: 'rejected',
      rejectReason: reply.reason,
    });
  });

  it('stores a JSON value that is not an object as rejected', async () => {
    const { app, inbox } = setup();
    const res = await post(app, '[1,2]', signedHeaders('[1,2]'));
    expect(res.statusCode).toBe(202);
    expect(inbox.calls[0]).toMatchObject({ eventId: null, outcome: 'rejected' });
  });

  it('stores a signed empty body as rejected', async () => {
    const { app, inbox } = setup();
    const res = await post(app, '', signedHeaders(''));
    expect(res.statusCode).toBe(202);
    expect(inbox.calls[0]).toMatchObject({ rawBody: '', outcome: 'rejected' });
  });
});

describe('POST /webhooks, inbox outcomes', () => {
  it('answers 200 duplicate for an event id already stored', async () => {
    const { app, inbox } = setup();
    const body = eventBody();
    expect((await post(app, body, signedHeaders(body))).statusCode).toBe(202);
    const again = await post(app, body, signedHeaders(body));
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ status: 'duplicate' });
    expect(inbox.byId.size).toBe(1);
  });

  it('answers 503 when the store fails, so the Service retries; the retry is then accepted', async () => {
    const { app, inbox } = setup();
    inbox.failWith = new Error('connection refused');
    const body = eventBody();
    const res = await post(app, body, signedHeaders(body));
    expect(res.statusCode).toBe(503);
    expect(res.json().error.code).toBe('WEBHOOK_STORE_UNAVAILABLE');
    expect(res.headers['retry-after']).toBe(String(STORE_RETRY_AFTER_S));
    expect(inbox.byId.size).toBe(0);

    inbox.failWith = null;
    const retry = await post(app, body, signedHeaders(body));
    expect(retry.statusCode).toBe(202);
    expect(inbox.byId.has('evt_001')).toBe(true);
  });

  it('answers 503 with Retry-After when the store hangs past its time bound, before the Service gives up', async () => {
    let storeCalled!: () => void;
    const called = new Promise<void>((r) => (storeCalled = r));
    const { app, clock } = setup({
      inbox: {
        store: () => {
          storeCalled();
          return new Promise(() => {}); // a database that never answers
        },
      },
    });
    const body = eventBody();
    const pending = post(app, body, signedHeaders(body));
    await called;
    await clock.advance(STORE_TIMEOUT_MS);
    const res = await pending;
    expect(STORE_TIMEOUT_MS).toBeLessThan(10_000);
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe(String(STORE_RETRY_AFTER_S));
    expect(res.json().error.code).toBe('WEBHOOK_STORE_UNAVAILABLE');
  });

  it('answers 503 when storing a rejected event fails', async () => {
    const { app, inbox } = setup();
    inbox.failWith = new Error('disk full');
    const res = await post(app, 'nope', signedHeaders('nope'));
    expect(res.statusCode).toBe(503);
  });

  it('does not answer before the store has resolved', async () => {
    let release!: (v: { duplicate: boolean }) => void;
    let storeCalled!: () => void;
    const called = new Promise<void>((r) => (storeCalled = r));
    const { app } = setup({
      inbox: {
        store: () => {
          storeCalled();
          return new Promise((r) => (release = r));
        },
      },
    });
    const body = eventBody();
    let answered = false;
    const pending = post(app, body, signedHeaders(body)).then((res) => {
      answered = true;
      return res;
    });
    await called;
    // Several turns of the event loop: an implementation that did not await would have answered.
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(answered).toBe(false);
    release({ duplicate: false });
    expect((await pending).statusCode).toBe(202);
  });
});

describe('webhook metrics', () => {
  it('counts received events by type and rejections by reason', async () => {
    const { app } = setup({ maxBodyBytes: 512 });
    const started = eventBody();
    const completed = eventBody({ id: 'evt_002', type: 'call.completed' });
    const unknown = eventBody({ id: 'evt_003', type: 'call.exploded' });
    await post(app, started, signedHeaders(started));
    await post(app, started, signedHeaders(started)); // a duplicate is still a delivery
    await post(app, completed, signedHeaders(completed, PREVIOUS_SECRET));
    await post(app, unknown, signedHeaders(unknown));
    await post(app, started, signedHeaders(started, 'wrong'));
    await post(app, started, { 'content-type': 'application/json' });
    await post(app, '{', signedHeaders('{'));
    await post(app, eventBody({ data: {} }), signedHeaders(eventBody({ data: {} })));
    const big = eventBody({ pad: 'z'.repeat(600) });
    await post(app, big, signedHeaders(big));

    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toContain('crmsync_webhooks_received_total{type="call.started"} 2');
    expect(text).toContain('crmsync_webhooks_received_total{type="call.completed"} 1');
    expect(text).toContain('crmsync_webhooks_received_total{type="other"} 1');
    expect(text).toContain('crmsync_webhook_rejections_total{reason="bad_signature"} 2');
    expect(text).toContain('crmsync_webhook_rejections_total{reason="malformed"} 1');
    expect(text).toContain('crmsync_webhook_rejections_total{reason="invalid_event"} 1');
    expect(text).toContain('crmsync_webhook_rejections_total{reason="too_large"} 1');
  });
});
