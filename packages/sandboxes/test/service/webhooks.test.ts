import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startServiceSandbox, type CallJson, type ServiceSandbox } from '../../src/service/index.js';
import { WebhookDispatcher } from '../../src/service/webhooks.js';
import { FakeClock } from '../../../../src/util/fakeClock.js';
import { admin, api, Receiver, ROOMY_LIMITS } from './helpers.js';

const SECRET = 'whsec-test-3f9a';
let sandbox: ServiceSandbox | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await sandbox?.close();
  await receiver?.close();
});

async function setup(statusFor?: (n: number) => number): Promise<{ s: ServiceSandbox; r: Receiver }> {
  receiver = await new Receiver(statusFor).start();
  sandbox = await startServiceSandbox({
    limits: ROOMY_LIMITS,
    webhookUrl: receiver.url,
    webhookSecret: SECRET,
    webhookRetry: { delaysMs: [20, 20] },
    analysisDelayMs: 20,
    seedCalls: 8,
  });
  return { s: sandbox, r: receiver };
}

/** Independent check: HMAC-SHA256 of the raw bytes, lowercase hex, compared in constant time. */
function signatureMatches(raw: Buffer, header: string | string[] | undefined, secret: string): boolean {
  if (typeof header !== 'string' || !/^[0-9a-f]{64}$/.test(header)) return false;
  const expected = createHmac('sha256', secret).update(raw).digest();
  return timingSafeEqual(expected, Buffer.from(header, 'hex'));
}

describe('webhooks', () => {
  it('POSTs a signed call.started event when a call is created', async () => {
    const { s, r } = await setup();
    const participant = { name: 'Jane Doe', email: 'Jane.Doe@Acme.example', company: 'Acme Corp' };
    const call = (await admin(s, '/calls', { participant })) as CallJson;
    expect(call.status).toBe('in_progress');
    await r.waitFor(1);
    const [got] = r.received;
    expect(got?.headers['content-type']).toBe('application/json');
    expect(signatureMatches(got?.raw as Buffer, got?.headers['x-service-signature'], SECRET)).toBe(true);
    expect(signatureMatches(got?.raw as Buffer, got?.headers['x-service-signature'], 'another-secret')).toBe(
      false,
    );
    expect(got?.json).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'call.started',
      created_at: expect.any(String),
      data: { call_id: call.id, call: expect.objectContaining({ id: call.id, participant }) },
    });
  });

  it('emits call.completed, transcript.ready, then analysis.ready and the call ends analysed', async () => {
    const { s, r } = await setup();
    const call = (await admin(s, '/calls', {})) as CallJson;
    const pending = await api(s, `/v1/calls/${call.id}/analysis`);
    expect(pending.status).toBe(409);
    await pending.arrayBuffer();
    const done = (await admin(s, `/calls/${call.id}/complete`, {})) as CallJson;
    expect(done.duration_seconds).toBeGreaterThan(0);
    await r.waitFor(4);
    expect(r.types()).toEqual(['call.started', 'call.completed', 'transcript.ready', 'analysis.ready']);
    expect(r.received.every((x) => x.json.data.call_id === call.id)).toBe(true);
    const analysis = await api(s, `/v1/calls/${call.id}/analysis`);
    expect(analysis.status).toBe(200);
    const final = (await (await api(s, `/v1/calls/${call.id}`)).json()) as CallJson;
    expect(final.status).toBe('analyzed');
    expect(final.scoring).toEqual((r.received[3]?.json.data.call as CallJson).scoring);
  });

  it('retries a receiver that answered 500 and counts the attempts', async () => {
    const { s, r } = await setup((n) => (n === 0 ? 500 : 200));
    await admin(s, '/calls', {});
    await r.waitFor(2);
    expect(r.received[1]?.raw.equals(r.received[0]?.raw as Buffer)).toBe(true);
    await vi.waitFor(() => expect(s.state.countersSnapshot().webhooks.delivered).toBe(1));
    expect(s.state.countersSnapshot().webhooks).toEqual({
      sent: 2,
      delivered: 1,
      failedAttempts: 1,
      abandoned: 0,
    });
  });

  it('gives up after the last retry of the schedule', async () => {
    const { s, r } = await setup(() => 503);
    await admin(s, '/calls', {});
    await r.waitFor(3);
    await vi.waitFor(() => expect(s.state.countersSnapshot().webhooks.abandoned).toBe(1));
    expect(s.state.countersSnapshot().webhooks).toMatchObject({ sent: 3, delivered: 0, failedAttempts: 3 });
  });

  it('emits followup.generated for each new draft', async () => {
    const { s, r } = await setup();
    const call = s.state.calls().find((c) => c.status === 'analyzed');
    const res = await api(s, `/v1/calls/${call?.id}/followups`, { method: 'POST', body: '{}' });
    const drafts = ((await res.json()) as { data: { id: string }[] }).data;
    await r.waitFor(drafts.length);
    expect(r.received.map((x) => x.json.type)).toEqual(drafts.map(() => 'followup.generated'));
    expect(r.received.map((x) => (x.json.data.followup as { id: string }).id)).toEqual(
      drafts.map((d) => d.id),
    );
  });

  it('replays emitted events with duplicates and shuffled, byte for byte', async () => {
    const { s, r } = await setup();
    const a = (await admin(s, '/calls', {})) as CallJson;
    await admin(s, '/calls', {});
    await r.waitFor(2);
    const original = r.received.map((x) => x.raw.toString('utf8'));
    const replay = (await admin(s, '/webhooks/replay', { duplicate: 3, shuffle: true })) as {
      replayed: number;
    };
    expect(replay.replayed).toBe(6);
    await r.waitFor(8);
    const replayed = r.received.slice(2).map((x) => x.raw.toString('utf8'));
    expect([...replayed].sort()).toEqual([...original, ...original, ...original].sort());
    expect(r.received.every((x) => signatureMatches(x.raw, x.headers['x-service-signature'], SECRET))).toBe(
      true,
    );

    const only = (await admin(s, '/webhooks/replay', { callId: a.id })) as { replayed: number };
    expect(only.replayed).toBe(1);
    await r.waitFor(9);
    expect(r.received[8]?.json.data.call_id).toBe(a.id);
  });

  it('records events without a webhook URL and sends to a URL set at run time', async () => {
    receiver = await new Receiver().start();
    sandbox = await startServiceSandbox({ limits: ROOMY_LIMITS, seedCalls: 2 });
    await admin(sandbox, '/calls', {});
    expect(sandbox.state.events).toHaveLength(1);
    expect(sandbox.state.countersSnapshot().webhooks.sent).toBe(0);
    await admin(sandbox, '/config', { webhookUrl: receiver.url });
    await admin(sandbox, '/calls', {});
    await receiver.waitFor(1);
    expect(receiver.types()).toEqual(['call.started']);
    expect(
      signatureMatches(
        receiver.received[0]?.raw as Buffer,
        receiver.received[0]?.headers['x-service-signature'],
        'sandbox-webhook-secret',
      ),
    ).toBe(true);
  });
});

describe('webhook senders', () => {
  it('a slow delivery holds up only its own sender: the next ones go out on the free ones', async () => {
    // A receiver that holds its answer to 'slow' until released and reports every arrival.
    const arrived: string[] = [];
    let onArrival = () => undefined as void;
    let releaseSlow = () => undefined as void;
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        arrived.push(body);
        onArrival();
        if (body === 'slow') releaseSlow = () => res.end();
        else res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const dispatcher = new WebhookDispatcher({
      clock: new FakeClock(),
      secret: SECRET,
      targetUrl: () => `http://127.0.0.1:${port}/`,
      delaysMs: [],
      concurrency: 2,
      counters: { sent: 0, delivered: 0, failedAttempts: 0, abandoned: 0 },
    });
    try {
      const arrivals = (n: number) =>
        new Promise<void>((resolve) => {
          onArrival = () => (arrived.length >= n ? resolve() : undefined);
          onArrival();
        });
      const slow = dispatcher.deliver('slow');
      await arrivals(1);
      // With the senders taking turns, 'third' would wait on the slow one's sender.
      const rest = [dispatcher.deliver('second'), dispatcher.deliver('third')];
      expect(await Promise.all(rest)).toEqual([true, true]);
      expect(arrived).toEqual(['slow', 'second', 'third']);
      releaseSlow();
      expect(await slow).toBe(true);
    } finally {
      dispatcher.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
