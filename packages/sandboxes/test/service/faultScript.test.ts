import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FaultRecord } from '../../src/service/faultRecord.js';
import { startServiceSandbox, type ServiceSandbox } from '../../src/service/index.js';
import { FakeClock } from '../../../../src/util/fakeClock.js';
import { admin, api, ROOMY_LIMITS } from './helpers.js';

let sandbox: ServiceSandbox;
afterEach(() => sandbox.close());

const FOLLOWUPS = 'POST /v1/calls/:id/followups';

function analysedCall(): string {
  const call = sandbox.state.calls().find((c) => c.status === 'analyzed');
  if (!call) throw new Error('no analysed call in the seed');
  return call.id;
}

function askFollowups(callId: string, init: RequestInit = {}) {
  return api(sandbox, `/v1/calls/${callId}/followups`, {
    method: 'POST',
    body: JSON.stringify({ tone: 'warm' }),
    ...init,
  });
}

async function faultLog(callId: string): Promise<FaultRecord[]> {
  return (await admin(sandbox, `/faults/log?callId=${callId}`)) as FaultRecord[];
}

describe('scripted faults (POST /_admin/faults/next)', () => {
  it('answers 500 after generating drafts when told it acted, and records the truth', async () => {
    sandbox = await startServiceSandbox({ limits: ROOMY_LIMITS });
    const id = analysedCall();
    const before = sandbox.state.followups(id).length;
    await admin(sandbox, '/faults/next', { match: FOLLOWUPS, status: 500, acted: true });
    expect((await admin(sandbox, '/faults/next')) as unknown[]).toHaveLength(1);

    const failed = await askFollowups(id);
    expect(failed.status).toBe(500);
    expect(await failed.text()).toBe('');
    const afterFault = sandbox.state.followups(id).length;
    expect(afterFault).toBeGreaterThan(before);
    expect(await faultLog(id)).toEqual([
      expect.objectContaining({
        endpoint: FOLLOWUPS,
        fault: '500',
        ambiguous: true,
        acted: true,
        scripted: true,
      }),
    ]);
    // One use only: the next request is served.
    expect((await askFollowups(id)).status).toBe(201);
    expect((await admin(sandbox, '/faults/next')) as unknown[]).toHaveLength(0);
  });

  it('503 and 429 never act; 429 carries the Retry-After asked for', async () => {
    sandbox = await startServiceSandbox({ limits: ROOMY_LIMITS });
    const id = analysedCall();
    const before = sandbox.state.followups(id).length;
    await admin(sandbox, '/faults/next', { match: FOLLOWUPS, callId: id, status: 503 });
    await admin(sandbox, '/faults/next', { match: FOLLOWUPS, status: 429, retryAfter: 2 });

    expect((await askFollowups(id)).status).toBe(503);
    const throttled = await askFollowups(id);
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('retry-after')).toBe('2');
    expect(((await throttled.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
    expect(sandbox.state.followups(id)).toHaveLength(before);
    expect((await faultLog(id)).map((f) => [f.fault, f.ambiguous, f.acted])).toEqual([
      ['503', false, false],
      ['429', false, false],
    ]);
  });

  it('matches only the given call and endpoint, count times', async () => {
    sandbox = await startServiceSandbox({ limits: ROOMY_LIMITS });
    const [a, b] = sandbox.state.calls().filter((c) => c.status === 'analyzed');
    await admin(sandbox, '/faults/next', { match: FOLLOWUPS, callId: a?.id, status: 502, count: 2 });
    expect((await api(sandbox, `/v1/calls/${a?.id}`)).status).toBe(200);
    expect((await askFollowups(b?.id as string)).status).toBe(201);
    expect((await askFollowups(a?.id as string)).status).toBe(502);
    expect((await askFollowups(a?.id as string)).status).toBe(502);
    expect((await askFollowups(a?.id as string)).status).toBe(201);
  });

  it('drops the connection before the answer (nothing done) or half-way through it (done)', async () => {
    sandbox = await startServiceSandbox({ limits: ROOMY_LIMITS });
    const id = analysedCall();
    const before = sandbox.state.followups(id).length;
    await admin(sandbox, '/faults/next', { match: FOLLOWUPS, drop: 'before' });
    await expect(askFollowups(id)).rejects.toThrow();
    expect(sandbox.state.followups(id)).toHaveLength(before);

    await admin(sandbox, '/faults/next', { match: FOLLOWUPS, drop: 'mid' });
    // The head arrives, the body is cut short.
    const cut = await askFollowups(id);
    expect(cut.status).toBe(201);
    await expect(cut.text()).rejects.toThrow();
    expect(sandbox.state.followups(id).length).toBeGreaterThan(before);
    expect((await faultLog(id)).map((f) => [f.fault, f.ambiguous, f.acted])).toEqual([
      ['drop-before', true, false],
      ['drop-mid', true, true],
    ]);
    expect(await admin(sandbox, '/counters')).toMatchObject({ dropped: 2 });
  });

  it('holds a stalled request past the client timeout; an acted stall answers late', async () => {
    const clock = new FakeClock();
    sandbox = await startServiceSandbox({ limits: ROOMY_LIMITS, clock });
    const id = analysedCall();
    const before = sandbox.state.followups(id).length;

    await admin(sandbox, '/faults/next', { match: FOLLOWUPS, stall: 30_000 });
    const gaveUp = new AbortController();
    const abandoned = askFollowups(id, { signal: gaveUp.signal });
    await vi.waitFor(() => expect(sandbox.state.faultLog).toHaveLength(1));
    gaveUp.abort();
    await expect(abandoned).rejects.toThrow();
    await clock.advance(30_000);
    expect(sandbox.state.followups(id)).toHaveLength(before);

    await admin(sandbox, '/faults/next', { match: FOLLOWUPS, stall: true, acted: true });
    const late = askFollowups(id);
    await vi.waitFor(() => expect(sandbox.state.faultLog).toHaveLength(2));
    const drafted = sandbox.state.followups(id).length;
    expect(drafted).toBeGreaterThan(before);
    await clock.advance(20_000);
    expect((await late).status).toBe(201);
    expect(sandbox.state.faultLog.map((f) => [f.fault, f.ambiguous, f.acted])).toEqual([
      ['stall', true, false],
      ['stall', true, true],
    ]);
  });

  it('refuses a malformed script and can be cleared', async () => {
    sandbox = await startServiceSandbox({ limits: ROOMY_LIMITS });
    const post = (body: unknown) =>
      fetch(`${sandbox.url}/_admin/faults/next`, { method: 'POST', body: JSON.stringify(body) });
    expect((await post({ match: FOLLOWUPS })).status).toBe(400);
    expect((await post({ match: FOLLOWUPS, status: 500, drop: 'mid' })).status).toBe(400);
    expect((await post({ match: FOLLOWUPS, status: 404 })).status).toBe(400);
    expect((await post({ match: FOLLOWUPS, status: 503, acted: true })).status).toBe(400);
    expect((await post({ match: 'followups', status: 500 })).status).toBe(400);
    expect((await post({ match: FOLLOWUPS, status: 500, count: 0 })).status).toBe(400);
    expect((await post({ match: FOLLOWUPS, status: 500 })).status).toBe(201);
    await admin(sandbox, '/faults/next/reset', {});
    expect((await askFollowups(analysedCall())).status).toBe(201);
  });
});

describe('random fault rates', () => {
  it('throttles with Retry-After at throttleRate and stalls at stallRate, set at run time', async () => {
    const clock = new FakeClock();
    sandbox = await startServiceSandbox({ limits: ROOMY_LIMITS, clock });
    expect(await admin(sandbox, '/faults', { throttleRate: 1, throttleRetryAfterS: 4 })).toMatchObject({
      throttleRate: 1,
      throttleRetryAfterS: 4,
    });
    const throttled = await api(sandbox, '/v1/calls');
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('retry-after')).toBe('4');

    await admin(sandbox, '/faults', { throttleRate: 0, stallRate: 1, stallMs: 5000, actedShare: 1 });
    const stalled = api(sandbox, '/v1/calls?limit=1');
    await vi.waitFor(() => expect(sandbox.state.faultLog).toHaveLength(2));
    await clock.advance(5000);
    expect((await stalled).status).toBe(200);
    expect(await admin(sandbox, '/faults')).toMatchObject({ stallRate: 1, stallMs: 5000 });
    expect((await admin(sandbox, '/faults/log')) as FaultRecord[]).toEqual([
      expect.objectContaining({ endpoint: 'GET /v1/calls', fault: '429', scripted: false }),
      // A read has no side effect, so it never "acted".
      expect.objectContaining({ endpoint: 'GET /v1/calls', fault: 'stall', acted: false }),
    ]);
  });
});
