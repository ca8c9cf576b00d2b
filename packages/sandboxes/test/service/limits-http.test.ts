import { afterEach, describe, expect, it } from 'vitest';
import {
  startServiceSandbox,
  type ServiceSandbox,
  type ServiceSandboxOptions,
} from '../../src/service/index.js';
import { FakeClock } from '../../../../src/util/fakeClock.js';
import { admin, api } from './helpers.js';

let sandbox: ServiceSandbox | undefined;
afterEach(() => sandbox?.close());

async function start(clock: FakeClock, options: ServiceSandboxOptions): Promise<ServiceSandbox> {
  sandbox = await startServiceSandbox({ clock, seedCalls: 3, ...options });
  return sandbox;
}

async function statuses(s: ServiceSandbox, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await api(s, '/v1/calls?limit=1');
    await res.arrayBuffer();
    out.push(res.status);
  }
  return out;
}

describe('limits over HTTP (FakeClock)', () => {
  it('refuses the burst+1-th request in a second and the rate+1-th in a minute, with Retry-After', async () => {
    const clock = new FakeClock();
    const s = await start(clock, { limits: { ratePerMinute: 5, burstPerSecond: 3, dailyCap: null } });
    expect(await statuses(s, 3)).toEqual([200, 200, 200]);
    const limited = await api(s, '/v1/calls');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(await limited.json()).toEqual({ error: { code: 'rate_limited', message: expect.any(String) } });

    await clock.advance(999);
    expect(await statuses(s, 1)).toEqual([429]);
    await clock.advance(1);
    expect(await statuses(s, 3)).toEqual([200, 200, 429]);
    // 5 accepted in this minute: the first three (at t0) free their slots at t0 + 60 s.
    const minute = await api(s, '/v1/calls');
    expect(minute.status).toBe(429);
    expect(minute.headers.get('retry-after')).toBe('59');
    await clock.advance(58_999);
    expect(await statuses(s, 1)).toEqual([429]);
    await clock.advance(1);
    expect(await statuses(s, 4)).toEqual([200, 200, 200, 429]);

    const counters = (await admin(s, '/counters')) as Record<string, unknown>;
    expect(counters).toMatchObject({
      accepted: 8,
      rejected429: 6,
      maxInAnySecond: 3,
      maxInAnyMinute: 5,
      usedToday: 8,
    });
    expect(counters.byStatus).toEqual({ '200': 8, '429': 6 });
    expect(counters.byEndpoint).toEqual({ 'GET /v1/calls': 14 });
  });

  it('sends Retry-After as an HTTP-date or fractional seconds when asked', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0, 400));
    const s = await start(clock, { limits: { ratePerMinute: 60, burstPerSecond: 1, dailyCap: null } });
    await statuses(s, 1);
    await clock.advance(100);
    await admin(s, '/config', { retryAfterFormat: 'http-date' });
    const dated = await api(s, '/v1/calls');
    // Free at 12:00:01.400, rounded up to the whole second.
    expect(dated.headers.get('retry-after')).toBe('Thu, 01 Jan 2026 12:00:02 GMT');
    await admin(s, '/config', { retryAfterFormat: 'fractional' });
    expect((await api(s, '/v1/calls')).headers.get('retry-after')).toBe('0.900');
    await admin(s, '/config', { retryAfterFormat: 'none' });
    const bare = await api(s, '/v1/calls');
    expect(bare.status).toBe(429);
    expect(bare.headers.has('retry-after')).toBe(false);
  });

  it('answers daily_cap_exceeded with a Retry-After reaching the next UTC midnight', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    const s = await start(clock, { limits: { ratePerMinute: 100, burstPerSecond: 100, dailyCap: 2 } });
    expect(await statuses(s, 2)).toEqual([200, 200]);
    const capped = await api(s, '/v1/calls');
    expect(capped.status).toBe(429);
    expect(capped.headers.get('retry-after')).toBe(String(12 * 3600));
    expect(((await capped.json()) as { error: { code: string } }).error.code).toBe('daily_cap_exceeded');
    await clock.advance(12 * 3600_000);
    expect(await statuses(s, 1)).toEqual([200]);
  });

  it('does not limit or count admin routes, and does not count 401s against the windows', async () => {
    const clock = new FakeClock();
    const s = await start(clock, { limits: { ratePerMinute: 60, burstPerSecond: 2, dailyCap: null } });
    for (let i = 0; i < 5; i++) await admin(s, '/counters');
    for (let i = 0; i < 5; i++) expect((await api(s, '/v1/calls', {}, 'bad-key')).status).toBe(401);
    expect(await statuses(s, 3)).toEqual([200, 200, 429]);
    expect(await admin(s, '/counters')).toMatchObject({ requests: 8, accepted: 2 });
  });

  it('applies the plan presets: sales allows 10 in a second', async () => {
    const clock = new FakeClock();
    const s = await start(clock, { plan: 'sales' });
    const got = await statuses(s, 11);
    expect(got.filter((x) => x === 200)).toHaveLength(10);
    expect(got[10]).toBe(429);
  });
});
