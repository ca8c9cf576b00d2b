/** The client's transport and error handling, against a scripted local HTTP server. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DailyCapReachedError } from '../../src/budget/types.js';
import {
  ServiceDailyCapError,
  ServiceRateLimitedError,
  ServiceResponseError,
  ServiceTransientError,
  ServiceUnauthorizedError,
} from '../../src/service/errors.js';
import { createServiceClient } from '../../src/service/client.js';
import { networkFailure } from '../../src/service/transport.js';
import { USER_AGENT } from '../../src/version.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { makeClient, rejectionOf, TEST_KEY } from './support/clientFixture.js';
import { PassThroughBudget } from './support/passThroughBudget.js';
import {
  drop,
  errorBody,
  hang,
  json,
  startScriptedServer,
  type ScriptedServer,
} from './support/scriptedServer.js';

const CALL = { id: 'c1', status: 'analyzed', created_at: '2026-01-01T10:00:00Z' };
const live = { priority: 'live' } as const;

let server: ScriptedServer;
let fixture: ReturnType<typeof makeClient>;

beforeEach(async () => {
  server = await startScriptedServer(json(200, CALL));
  fixture = makeClient(server.url);
});
afterEach(async () => {
  await fixture.client.close();
  await server.close();
});

describe('requests', () => {
  it('send Bearer auth, Accept, the project User-Agent, and Content-Type only with a body', async () => {
    server.script(json(200, CALL), json(200, { status: 'accepted' }));
    await fixture.client.getCall('c1', live);
    await fixture.client.pushContext('c1', { source: 'hubspot', contact: { email: 'a@b.c' } }, live);
    const [get, post] = server.seen;
    expect(get?.method).toBe('GET');
    expect(get?.url).toBe('/v1/calls/c1');
    expect(get?.headers.authorization).toBe(`Bearer ${TEST_KEY}`);
    expect(get?.headers.accept).toBe('application/json');
    expect(get?.headers['user-agent']).toBe(USER_AGENT);
    expect(get?.headers['content-type']).toBeUndefined();
    expect(post?.method).toBe('POST');
    expect(post?.url).toBe('/v1/calls/c1/context');
    expect(post?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(post?.body ?? '')).toEqual({ source: 'hubspot', contact: { email: 'a@b.c' } });
  });

  it('reuse keep-alive connections', async () => {
    for (let i = 0; i < 10; i++) await fixture.client.getCall('c1', live);
    expect(server.seen).toHaveLength(10);
    // undici frees a socket a tick after the body ends, so a back-to-back request may open a second one.
    expect(server.connections).toBeLessThanOrEqual(2);
  });

  it('each go through the budget at the caller priority, labelled by endpoint', async () => {
    await fixture.client.getCall('c 1/x', { priority: 'backfill' });
    expect(server.seen[0]?.url).toBe('/v1/calls/c%201%2Fx');
    expect(fixture.budget.runs).toEqual([{ priority: 'backfill', label: 'GET /v1/calls/:id' }]);
  });

  it('keep a base URL path prefix', async () => {
    const prefixed = makeClient(`${server.url}/api/`);
    await prefixed.client.getCall('c1', live);
    expect(server.seen[0]?.url).toBe('/api/v1/calls/c1');
    await prefixed.client.close();
  });
});

describe('transient failures', () => {
  it('a 5xx is retried with backoff, every attempt paid from the budget, then succeeds', async () => {
    server.script(errorBody(503, 'unavailable'), errorBody(500, 'oops'), json(200, CALL));
    await expect(fixture.client.getCall('c1', live)).resolves.toMatchObject({ id: 'c1' });
    expect(server.seen).toHaveLength(3);
    expect(fixture.budget.runs).toHaveLength(3);
    // random() = 0: each wait is the 500 ms floor.
    expect(fixture.clock.waits).toEqual([500, 500]);
    expect(fixture.client.health()).toEqual({ unauthorized: false });
  });

  it('gives up after maxAttempts with ServiceTransientError and records it in health', async () => {
    const f = makeClient(server.url, { maxAttempts: 3 });
    server.script(errorBody(502, 'bad_gateway'));
    const err = await rejectionOf(f.client.getCall('c1', live));
    expect(err).toBeInstanceOf(ServiceTransientError);
    expect((err as ServiceTransientError).kind).toBe('status');
    expect(server.seen).toHaveLength(3);
    expect(f.client.health().lastError).toMatch(/^SERVICE_TRANSIENT: GET \/v1\/calls\/c1 answered 502/);
    await f.client.close();
  });

  it('a dropped connection is retried', async () => {
    server.script(drop, json(200, CALL));
    await expect(fixture.client.getCall('c1', live)).resolves.toMatchObject({ id: 'c1' });
    expect(server.seen).toHaveLength(2);
  });

  it('a connection dropped every time ends as a transient connection error', async () => {
    const f = makeClient(server.url, { maxAttempts: 2 });
    server.script(drop);
    const err = await rejectionOf(f.client.getCall('c1', live));
    expect(err).toBeInstanceOf(ServiceTransientError);
    expect((err as ServiceTransientError).kind).toBe('connection');
    await f.client.close();
  });

  it('a body cut short mid-way is a transient connection error', async () => {
    const f = makeClient(server.url, { maxAttempts: 1 });
    server.script((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      res.write('{"id":"c1",');
      setImmediate(() => res.socket?.destroy());
    });
    const err = await rejectionOf(f.client.getCall('c1', live));
    expect(err).toBeInstanceOf(ServiceTransientError);
    expect((err as ServiceTransientError).kind).toBe('connection');
    await f.client.close();
  });

  it('no answer within timeoutMs is a transient timeout, then retried', async () => {
    const f = makeClient(server.url, { timeoutMs: 150, maxAttempts: 2 });
    server.script(hang, json(200, CALL));
    await expect(f.client.getCall('c1', live)).resolves.toMatchObject({ id: 'c1' });
    expect(server.seen).toHaveLength(2);
    await f.client.close();
  });

  it('a body that stalls longer than timeoutMs is a transient timeout', async () => {
    const f = makeClient(server.url, { timeoutMs: 150, maxAttempts: 1 });
    server.script((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"id":');
    });
    const err = await rejectionOf(f.client.getCall('c1', live));
    expect(err).toBeInstanceOf(ServiceTransientError);
    expect((err as ServiceTransientError).kind).toBe('timeout');
    expect(err.message).toMatch(/within 150 ms/);
    await f.client.close();
  });

  it('a connection lost after the request was written is kind connection, before it is kind unsent', () => {
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    const req = {
      method: 'POST' as const,
      url: new URL('http://127.0.0.1/v1/calls/c1/followups'),
      headers: {},
      context: { method: 'POST', path: '/v1/calls/c1/followups' },
    };
    expect((networkFailure(reset, req, 1_000, true) as ServiceTransientError).kind).toBe('connection');
    const unsent = networkFailure(reset, req, 1_000, false) as ServiceTransientError;
    expect(unsent.kind).toBe('unsent');
    expect(unsent.message).toMatch(/before the request was sent/);
    // Anything else once the request is out is a lost connection too; before, it passes through.
    const odd = new TypeError('terminated');
    expect((networkFailure(odd, req, 1_000, true) as ServiceTransientError).kind).toBe('connection');
    expect(networkFailure(odd, req, 1_000, false)).toBe(odd);
  });

  it('a refused connection is transient, kind refused', async () => {
    const port = await freePort();
    const f = makeClient(`http://127.0.0.1:${port}`, { maxAttempts: 2 });
    const err = await rejectionOf(f.client.getCall('c1', live));
    expect(err).toBeInstanceOf(ServiceTransientError);
    expect((err as ServiceTransientError).kind).toBe('refused');
    expect(f.budget.runs).toHaveLength(2);
    await f.client.close();
  });

  it('waits on the injected clock: the retry is not sent before the backoff has passed', async () => {
    const clock = new FakeClock();
    const budget = new PassThroughBudget();
    const client = createServiceClient({
      baseUrl: server.url,
      apiKey: TEST_KEY,
      budget,
      clock,
      random: () => 0,
    });
    server.script(errorBody(500, 'oops'), json(200, CALL));
    const result = client.getCall('c1', live);
    await vi.waitFor(() => expect(clock.pending()).toBe(1));
    await clock.advance(499);
    expect(server.seen).toHaveLength(1);
    await clock.advance(1);
    await expect(result).resolves.toMatchObject({ id: 'c1' });
    expect(server.seen).toHaveLength(2);
    await client.close();
  });

  it('an abort during the backoff wait stops the call with the abort reason', async () => {
    const clock = new FakeClock();
    const client = createServiceClient({
      baseUrl: server.url,
      apiKey: TEST_KEY,
      budget: new PassThroughBudget(),
      clock,
    });
    server.script(errorBody(500, 'oops'));
    const controller = new AbortController();
    const result = client.getCall('c1', { priority: 'live', signal: controller.signal });
    await vi.waitFor(() => expect(clock.pending()).toBe(1));
    controller.abort(new Error('shutting down'));
    await expect(result).rejects.toThrow('shutting down');
    expect(server.seen).toHaveLength(1);
    await client.close();
  });
});

describe('429', () => {
  it.each([
    ['delta-seconds', () => '2', 2_000],
    ['fractional seconds', () => '0.25', 250],
    ['missing (exponential from 1 s)', () => undefined, 1_000],
  ])('with Retry-After %s: pauses the whole gate, then retries after the wait', async (_form, header, ms) => {
    const retryAfter = header();
    server.script(
      errorBody(429, 'rate_limited', 'slow', retryAfter ? { 'retry-after': retryAfter } : {}),
      json(200, CALL),
    );
    await expect(fixture.client.getCall('c1', live)).resolves.toMatchObject({ id: 'c1' });
    expect(fixture.budget.pauses).toEqual([{ ms, reason: 'rate', runsBefore: 1 }]);
    expect(fixture.clock.waits).toEqual([ms]);
    expect(server.seen).toHaveLength(2);
  });

  it('with Retry-After as an HTTP-date: waits until then', async () => {
    let date = '';
    server.script(
      (req, res) => {
        date = new Date(Date.now() + 5_000).toUTCString();
        errorBody(429, 'rate_limited', 'slow', { 'retry-after': date })(req, res, server.seen[0]!);
      },
      json(200, CALL),
    );
    await fixture.client.getCall('c1', live);
    const pause = fixture.budget.pauses[0];
    expect(pause?.reason).toBe('rate');
    // Whole seconds on the wire: between 4 and 5 s from when the client read it.
    expect(pause?.ms).toBeGreaterThan(3_900);
    expect(pause?.ms).toBeLessThanOrEqual(5_000);
    expect(fixture.clock.waits).toEqual([pause?.ms]);
  });

  it('gives up with ServiceRateLimitedError once attempts run out, having paused each time', async () => {
    const f = makeClient(server.url, { maxAttempts: 2 });
    server.script(errorBody(429, 'rate_limited', 'slow', { 'retry-after': '1' }));
    const err = await rejectionOf(f.client.getCall('c1', live));
    expect(err).toBeInstanceOf(ServiceRateLimitedError);
    expect((err as ServiceRateLimitedError).retryAfterMs).toBe(1_000);
    expect(f.budget.pauses.map((p) => p.reason)).toEqual(['rate', 'rate']);
    await f.client.close();
  });

  it('the daily cap (error code) pauses the gate until it resets and is not retried', async () => {
    server.script(errorBody(429, 'daily_cap_exceeded', 'daily cap'));
    const err = await rejectionOf(fixture.client.getCall('c1', live));
    expect(err).toBeInstanceOf(ServiceDailyCapError);
    expect(server.seen).toHaveLength(1);
    const resetsAt = (err as ServiceDailyCapError).resetsAt;
    const d = new Date();
    expect(resetsAt).toBe(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1));
    expect(fixture.budget.pauses).toHaveLength(1);
    expect(fixture.budget.pauses[0]?.reason).toBe('daily');
    expect(fixture.budget.pauses[0]?.ms).toBeGreaterThan(0);
    expect(fixture.logLines.join('')).toContain('SERVICE_DAILY_CAP');
  });

  it('a Retry-After past the next UTC midnight is the daily cap', async () => {
    server.script(errorBody(429, 'rate_limited', 'x', { 'retry-after': String(25 * 3600) }));
    const err = await rejectionOf(fixture.client.getCall('c1', live));
    expect(err).toBeInstanceOf(ServiceDailyCapError);
    expect(fixture.budget.pauses[0]?.reason).toBe('daily');
  });

  it("the budget's own daily-cap refusal passes through without a request", async () => {
    fixture.budget.refuseWith = new DailyCapReachedError(Date.now() + 1000);
    await expect(fixture.client.getCall('c1', live)).rejects.toBeInstanceOf(DailyCapReachedError);
    expect(server.seen).toHaveLength(0);
  });
});

describe('401', () => {
  it('stops all requests until resetAuth, logging once and never the key', async () => {
    server.script(errorBody(401, 'invalid_api_key', `key ${TEST_KEY} is not valid`));
    const first = await rejectionOf(fixture.client.getCall('c1', live));
    expect(first).toBeInstanceOf(ServiceUnauthorizedError);
    expect(fixture.client.health().unauthorized).toBe(true);
    expect(server.seen).toHaveLength(1);

    const again = await Promise.all([
      rejectionOf(fixture.client.getCall('c1', live)),
      rejectionOf(fixture.client.listCallsPage({}, live)),
      rejectionOf(fixture.client.pushContext('c1', { source: 'hubspot' }, live)),
    ]);
    for (const err of again) expect(err).toBeInstanceOf(ServiceUnauthorizedError);
    expect(server.seen).toHaveLength(1);
    expect(fixture.budget.runs).toHaveLength(1);

    const errorLines = fixture.logLines.filter((l) => l.includes('"level":50'));
    expect(errorLines).toHaveLength(1);
    expect(errorLines[0]).toContain('401');

    server.script(json(200, CALL));
    fixture.client.resetAuth();
    expect(fixture.client.health().unauthorized).toBe(false);
    await expect(fixture.client.getCall('c1', live)).resolves.toMatchObject({ id: 'c1' });
  });
});

describe('the API key', () => {
  it('never appears in an error message, a cause, or a log line', async () => {
    const f = makeClient(server.url, { maxAttempts: 2, timeoutMs: 100 });
    // The server echoes the Authorization header back in every error it can.
    const echo = (status: number) => (req: IncomingMessage, res: ServerResponse) => {
      const auth = String(req.headers.authorization);
      res.writeHead(status, { 'content-type': 'application/json', 'x-echo': auth });
      res.end(JSON.stringify({ error: { code: `bad_${auth}`, message: `you sent ${auth}` } }));
    };
    const errors: Error[] = [];
    for (const status of [400, 403, 404, 422, 429, 500]) {
      server.script(echo(status));
      errors.push(await rejectionOf(f.client.getCall('c1', live)));
    }
    server.script(json(200, { id: TEST_KEY.length }));
    errors.push(await rejectionOf(f.client.getCall('c1', live)));
    server.script(hang);
    errors.push(await rejectionOf(f.client.getCall('c1', { ...live, signal: AbortSignal.timeout(50) })));
    server.script(echo(401));
    errors.push(await rejectionOf(f.client.getCall('c1', live)));
    errors.push(await rejectionOf(f.client.getCall('c1', live)));

    for (const err of errors) {
      const text = `${err.message} ${String(err.stack)} ${JSON.stringify(err)} ${String((err as { cause?: unknown }).cause)}`;
      expect(text).not.toContain(TEST_KEY);
    }
    expect(f.logLines.length).toBeGreaterThanOrEqual(3);
    expect(f.logLines.join('\n')).not.toContain(TEST_KEY);
    expect(JSON.stringify(f.client.health())).not.toContain(TEST_KEY);
    await f.client.close();
  });
});

describe('responses that break the contract', () => {
  it('fail with ServiceResponseError naming the field, and are not retried', async () => {
    server.script(
      json(200, { data: [CALL, { status: 'x', created_at: 'y' }], next_cursor: 'n', has_more: false }),
    );
    const err = await rejectionOf(fixture.client.listCallsPage({}, live));
    expect(err).toBeInstanceOf(ServiceResponseError);
    expect((err as ServiceResponseError).field).toBe('data[1].id');
    expect(server.seen).toHaveLength(1);
  });

  it('a body that is not JSON is a bad response', async () => {
    server.script((_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>'));
    const err = await rejectionOf(fixture.client.getCall('c1', live));
    expect(err).toBeInstanceOf(ServiceResponseError);
  });
});

it('a closed client refuses calls', async () => {
  await fixture.client.close();
  await expect(fixture.client.getCall('c1', live)).rejects.toThrow(/closed/);
  expect(server.seen).toHaveLength(0);
});

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}
