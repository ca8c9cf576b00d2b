import { afterEach, describe, expect, it } from 'vitest';
import { decideFault, NO_FAULTS } from '../../src/service/faults.js';
import { startServiceSandbox, type ServiceSandbox } from '../../src/service/index.js';
import { admin, api, ROOMY_LIMITS } from './helpers.js';

let sandbox: ServiceSandbox | undefined;
afterEach(() => sandbox?.close());

function scripted(values: number[]): () => number {
  return () => {
    const v = values.shift();
    if (v === undefined) throw new Error('script ran out');
    return v;
  };
}

describe('decideFault', () => {
  it('drops, errors, stalls, throttles or passes according to the rates', () => {
    expect(decideFault(NO_FAULTS, scripted([]))).toEqual({ kind: 'none' });
    expect(decideFault({ ...NO_FAULTS, dropRate: 0.3 }, scripted([0.29, 0.4]))).toEqual({
      kind: 'drop',
      phase: 'before',
    });
    expect(decideFault({ ...NO_FAULTS, dropRate: 0.3 }, scripted([0.1, 0.6]))).toEqual({
      kind: 'drop',
      phase: 'mid',
    });
    expect(decideFault({ ...NO_FAULTS, dropRate: 0.3 }, scripted([0.3]))).toEqual({ kind: 'none' });
    expect(decideFault({ ...NO_FAULTS, errorRate: 0.5 }, scripted([0.1, 0.5, 0.9, 0.4]))).toEqual({
      kind: 'error',
      status: 502,
      html: false,
      acted: true,
    });
    // A 503 never acts, so no draw is made for it.
    expect(decideFault({ ...NO_FAULTS, errorRate: 0.5 }, scripted([0.1, 0.99, 0.1]))).toEqual({
      kind: 'error',
      status: 503,
      html: true,
      acted: false,
    });
    expect(decideFault({ ...NO_FAULTS, stallRate: 0.2, stallMs: 900 }, scripted([0.1, 0.7]))).toEqual({
      kind: 'stall',
      ms: 900,
      acted: false,
    });
    expect(decideFault({ ...NO_FAULTS, throttleRate: 1, throttleRetryAfterS: 3 }, scripted([0.5]))).toEqual({
      kind: 'throttle',
      retryAfterS: 3,
    });
  });
});

describe('fault injection over HTTP', () => {
  it('answers 5xx with no body or an HTML page, and the request still takes a slot', async () => {
    sandbox = await startServiceSandbox({
      limits: { ratePerMinute: 100, burstPerSecond: 4, dailyCap: null },
      faults: { errorRate: 1 },
    });
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const res = await api(sandbox, '/v1/calls');
      expect([500, 502, 503]).toContain(res.status);
      const body = await res.text();
      if (body) expect(res.headers.get('content-type')).toBe('text/html');
      seen.add(body ? 'html' : 'empty');
    }
    expect(seen).toEqual(new Set(['html', 'empty']));
    expect((await api(sandbox, '/v1/calls')).status).toBe(429);
    expect(await admin(sandbox, '/counters')).toMatchObject({ accepted: 4, rejected429: 1 });
  });

  it('destroys the socket before or mid-answer at dropRate 1, and heals when changed at run time', async () => {
    sandbox = await startServiceSandbox({ limits: ROOMY_LIMITS, faults: { dropRate: 1 } });
    // Cut before the head or half-way through the body: either way no whole answer arrives.
    await expect(api(sandbox, '/v1/calls').then((res) => res.text())).rejects.toThrow();
    expect(await admin(sandbox, '/counters')).toMatchObject({ accepted: 1, dropped: 1, byStatus: {} });
    expect(await admin(sandbox, '/faults', { dropRate: 0 })).toMatchObject({
      errorRate: 0,
      latencyMs: 0,
      dropRate: 0,
    });
    expect((await api(sandbox, '/v1/calls')).status).toBe(200);
  });

  it('adds latency to every API answer but not to admin routes', async () => {
    sandbox = await startServiceSandbox({ limits: ROOMY_LIMITS });
    await admin(sandbox, '/faults', { latencyMs: 150 });
    const started = performance.now();
    const res = await api(sandbox, '/v1/calls?limit=1');
    expect(res.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(145);
  });

  it('refuses bad fault settings', async () => {
    sandbox = await startServiceSandbox({ limits: ROOMY_LIMITS });
    const res = await fetch(`${sandbox.url}/_admin/faults`, { method: 'POST', body: '{"errorRate":2}' });
    expect(res.status).toBe(400);
  });
});
