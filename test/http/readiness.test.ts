import { describe, expect, it } from 'vitest';
import { composeReadiness } from '../../src/http/readiness.js';
import { FakeClock } from '../../src/util/fakeClock.js';

describe('composeReadiness', () => {
  it('is ready with no failing check', async () => {
    const report = await composeReadiness({ a: async () => ({ ok: true }) })();
    expect(report).toEqual({ ready: true, checks: { a: { ok: true } } });
  });

  it('turns a check that outlasts the timeout into a failure, on the injected clock', async () => {
    const clock = new FakeClock();
    const readiness = composeReadiness(
      { fast: async () => ({ ok: true }), hung: () => new Promise(() => {}) },
      { timeoutMs: 500, clock },
    );
    let settled = false;
    const pending = readiness().then((r) => {
      settled = true;
      return r;
    });
    await clock.advance(499);
    expect(settled).toBe(false);
    await clock.advance(1);
    expect(await pending).toEqual({
      ready: false,
      checks: { fast: { ok: true }, hung: { ok: false, detail: 'no answer within 500 ms' } },
    });
  });

  it('clears the timers of checks that answered', async () => {
    const clock = new FakeClock();
    await composeReadiness({ a: async () => ({ ok: false, detail: 'x' }) }, { clock })();
    expect(clock.pending()).toBe(0);
  });
});
