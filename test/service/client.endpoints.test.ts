/** Endpoint behaviour the sandbox cannot force: redirects, streaming, probes, refusals before sending. */
import { once } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ServiceBadRequestError,
  ServiceNotFoundError,
  ServiceNotReadyError,
  ServiceResponseError,
  ServiceTransientError,
} from '../../src/service/errors.js';
import { makeClient, rejectionOf, TEST_KEY } from './support/clientFixture.js';
import { errorBody, json, startScriptedServer, type ScriptedServer } from './support/scriptedServer.js';

const CALL = { id: 'c1', status: 'analyzed', created_at: '2026-01-01T10:00:00Z' };
const live = { priority: 'live' } as const;

let server: ScriptedServer;
let storage: ScriptedServer;
let fixture: ReturnType<typeof makeClient>;

beforeEach(async () => {
  server = await startScriptedServer(json(200, CALL));
  storage = await startScriptedServer(json(200, {}));
  fixture = makeClient(server.url);
});
afterEach(async () => {
  await fixture.client.close();
  await server.close();
  await storage.close();
});

describe('getRecording', () => {
  it('streams the body: resolves before the server has finished sending', async () => {
    let finish = () => {};
    server.script((_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': '6' });
      res.write('abc');
      finish = () => res.end('def');
    });
    const rec = await fixture.client.getRecording('c1', live);
    expect(rec.contentType).toBe('audio/mpeg');
    expect(rec.contentLength).toBe(6);
    const [first] = (await once(rec.body, 'data')) as [Buffer];
    expect(first.toString()).toBe('abc');
    finish();
    const rest: Buffer[] = [];
    for await (const chunk of rec.body) rest.push(chunk as Buffer);
    expect(Buffer.concat(rest).toString()).toBe('def');
    expect(server.seen[0]?.url).toBe('/v1/calls/c1/recording');
  });

  it('follows a 302 to a signed URL without sending the Authorization header there', async () => {
    server.script(
      (_req, res) => void res.writeHead(302, { location: `${storage.url}/rec/c1.mp3?sig=s3cr3t` }).end(),
    );
    storage.script((_req, res) => void res.writeHead(200, { 'content-type': 'audio/mpeg' }).end('AUDIO'));
    const rec = await fixture.client.getRecording('c1', live);
    const chunks: Buffer[] = [];
    for await (const chunk of rec.body) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('AUDIO');
    expect(server.seen[0]?.headers.authorization).toBe(`Bearer ${TEST_KEY}`);
    expect(storage.seen).toHaveLength(1);
    expect(storage.seen[0]?.url).toBe('/rec/c1.mp3?sig=s3cr3t');
    expect(storage.seen[0]?.headers.authorization).toBeUndefined();
    expect(JSON.stringify(storage.seen[0]?.headers)).not.toContain(TEST_KEY);
    // Storage on another origin is not a Service request: one budget run only.
    expect(fixture.budget.runs).toHaveLength(1);
  });

  it.each([
    ['a Service API path: paid from the budget', '/v1/downloads/c1?token=t', 2],
    ['outside /v1: not an API request, not paid', '/_signed/recording/c1?token=t', 1],
  ])('same-origin redirect to %s, still without Authorization', async (_name, location, runs) => {
    server.script(
      (_req, res) => void res.writeHead(302, { location }).end(),
      (_req, res) => void res.writeHead(200, { 'content-type': 'audio/wav' }).end('W'),
    );
    const rec = await fixture.client.getRecording('c1', live);
    rec.body.resume();
    await once(rec.body, 'end');
    expect(rec.contentType).toBe('audio/wav');
    expect(server.seen[1]?.url).toBe(location);
    expect(server.seen[1]?.headers.authorization).toBeUndefined();
    expect(fixture.budget.runs.map((r) => r.label)).toEqual(
      ['GET /v1/calls/:id/recording', 'GET /v1/calls/:id/recording (signed)'].slice(0, runs),
    );
  });

  it('asks the Service for a fresh signed URL when the old one fails, never naming it in errors', async () => {
    const f = makeClient(server.url, { maxAttempts: 2 });
    server.script(
      (_req, res) => void res.writeHead(302, { location: `${storage.url}/rec?sig=s3cr3t` }).end(),
    );
    storage.script((_req, res) => void res.writeHead(403).end('expired'));
    const err = await rejectionOf(f.client.getRecording('c1', live));
    expect(err).toBeInstanceOf(ServiceTransientError);
    expect(err.message).not.toContain('s3cr3t');
    expect(server.seen).toHaveLength(2);
    expect(storage.seen).toHaveLength(2);
    await f.client.close();
  });

  it('a redirect without Location is a bad response', async () => {
    server.script((_req, res) => void res.writeHead(302).end());
    const err = await rejectionOf(fixture.client.getRecording('c1', live));
    expect(err).toBeInstanceOf(ServiceResponseError);
    expect((err as ServiceResponseError).field).toBe('Location');
  });

  it('a 404 is an unknown call', async () => {
    server.script(errorBody(404, 'call_not_found'));
    await expect(fixture.client.getRecording('nope', live)).rejects.toBeInstanceOf(ServiceNotFoundError);
  });
});

describe('getAnalysis', () => {
  const ANALYSIS = { call_id: 'c1', summary: 's', next_steps: [] };

  it('409 is not ready, without asking anything else', async () => {
    server.script(errorBody(409, 'analysis_pending'));
    await expect(fixture.client.getAnalysis('c1', live)).rejects.toBeInstanceOf(ServiceNotReadyError);
    expect(server.seen).toHaveLength(1);
  });

  it('a bare 404 for a known call is not ready (the call is looked up once)', async () => {
    server.script((_req, res) => void res.writeHead(404).end(), json(200, CALL));
    const err = await rejectionOf(fixture.client.getAnalysis('c1', live));
    expect(err).toBeInstanceOf(ServiceNotReadyError);
    expect((err as ServiceNotReadyError).code).toBe('SERVICE_NOT_READY');
    expect(server.seen.map((s) => s.url)).toEqual(['/v1/calls/c1/analysis', '/v1/calls/c1']);
  });

  it('a 404 whose code says the call is unknown is not found, without asking', async () => {
    server.script(errorBody(404, 'call_not_found'));
    await expect(fixture.client.getAnalysis('gone', live)).rejects.toBeInstanceOf(ServiceNotFoundError);
    expect(server.seen).toHaveLength(1);
  });

  it('a bare 404 for an unknown call is not found', async () => {
    server.script((_req, res) => void res.writeHead(404).end());
    const err = await rejectionOf(fixture.client.getAnalysis('gone', live));
    expect(err).toBeInstanceOf(ServiceNotFoundError);
    expect((err as ServiceNotFoundError).path).toBe('/v1/calls/gone/analysis');
  });

  it('returns the analysis when ready', async () => {
    server.script(json(200, ANALYSIS));
    await expect(fixture.client.getAnalysis('c1', live)).resolves.toEqual(ANALYSIS);
  });
});

describe('generateFollowups', () => {
  it('is not retried after a 5xx: a second POST would create more drafts', async () => {
    server.script(errorBody(500, 'oops'), json(201, { data: [] }));
    await expect(fixture.client.generateFollowups('c1', { tone: 'warm' }, live)).rejects.toBeInstanceOf(
      ServiceTransientError,
    );
    expect(server.seen).toHaveLength(1);
  });

  it('is retried after a 503: the Service declined it', async () => {
    const draft = { id: 'f1', subject: 's', body: 'b', to: ['a@b.c'], created_at: '2026-01-01T00:00:00Z' };
    server.script(errorBody(503, 'unavailable', 'down'), json(201, { data: [draft] }));
    await expect(fixture.client.generateFollowups('c1', {}, live)).resolves.toEqual([draft]);
    expect(server.seen).toHaveLength(2);
  });

  it('is retried after a 429: the Service did nothing', async () => {
    const draft = { id: 'f1', subject: 's', body: 'b', to: ['a@b.c'], created_at: '2026-01-01T00:00:00Z' };
    server.script(errorBody(429, 'rate_limited', 'x', { 'retry-after': '1' }), json(201, { data: [draft] }));
    await expect(fixture.client.generateFollowups('c1', {}, live)).resolves.toEqual([draft]);
    expect(server.seen).toHaveLength(2);
  });
});

describe('pushContext', () => {
  it('refuses a body over 64 KiB without sending it', async () => {
    const big = { source: 'salesforce' as const, custom: { notes: 'x'.repeat(70_000) } };
    const err = await rejectionOf(fixture.client.pushContext('c1', big, live));
    expect(err).toBeInstanceOf(ServiceBadRequestError);
    expect(server.seen).toHaveLength(0);
    expect(fixture.budget.runs).toHaveLength(0);
  });

  it('takes an empty 202 as accepted', async () => {
    server.script((_req, res) => void res.writeHead(202).end());
    await expect(fixture.client.pushContext('c1', { source: 'hubspot' }, live)).resolves.toEqual({
      status: 'accepted',
    });
  });
});

describe('call ids', () => {
  it('an empty id is refused without a request', async () => {
    await expect(fixture.client.getCall('', live)).rejects.toBeInstanceOf(ServiceBadRequestError);
    expect(server.seen).toHaveLength(0);
  });
});

describe('listCalls', () => {
  const page = (ids: string[], next: string | null, more: boolean) =>
    json(200, { data: ids.map((id) => ({ ...CALL, id })), next_cursor: next, has_more: more });

  it('follows next_cursor while has_more and hands back each cursor', async () => {
    server.script(page(['a', 'b'], 'k1', true), page(['c'], 'k2', false));
    const pages = [];
    for await (const p of fixture.client.listCalls(
      { limit: 2, status: 'analyzed' },
      { priority: 'backfill' },
    )) {
      pages.push({ ids: p.calls.map((c) => c.id), next: p.nextCursor, more: p.hasMore });
    }
    expect(pages).toEqual([
      { ids: ['a', 'b'], next: 'k1', more: true },
      { ids: ['c'], next: 'k2', more: false },
    ]);
    expect(server.seen.map((s) => s.url)).toEqual([
      '/v1/calls?limit=2&status=analyzed',
      '/v1/calls?limit=2&cursor=k1&status=analyzed',
    ]);
  });

  it('stops with a bad response when has_more comes without a cursor', async () => {
    server.script(page(['a'], null, true));
    const err = await rejectionOf(fixture.client.listCallsPage({}, live));
    expect((err as ServiceResponseError).field).toBe('next_cursor');
  });

  it('stops instead of looping when the cursor does not move', async () => {
    server.script(page(['a'], 'same', true));
    const seen: string[] = [];
    const err = await rejectionOf(
      (async () => {
        for await (const p of fixture.client.listCalls({ cursor: 'same' }, live))
          seen.push(...p.calls.map((c) => c.id));
      })(),
    );
    expect(err).toBeInstanceOf(ServiceResponseError);
    expect(server.seen).toHaveLength(1);
  });
});
