import { describe, expect, it } from 'vitest';
import { Wakeup } from '../../src/budget/wakeup.js';
import { newClock, settle } from './helpers.js';

function track(p: Promise<void>) {
  const state = { done: false, error: undefined as unknown };
  p.then(
    () => (state.done = true),
    (e: unknown) => (state.error = e),
  );
  return state;
}

describe('Wakeup', () => {
  it('resolves at the given time', async () => {
    const clock = newClock();
    const w = new Wakeup(clock);
    const s = track(w.wait(clock.now() + 500, w.seen, new AbortController().signal));
    await clock.runFor(499);
    expect(s.done).toBe(false);
    await clock.runFor(1);
    expect(s.done).toBe(true);
    expect(clock.pending()).toBe(0);
  });

  it('resolves on a wake-up, every waiter, and clears their timers', async () => {
    const clock = newClock();
    const w = new Wakeup(clock);
    const signal = new AbortController().signal;
    const a = track(w.wait(null, w.seen, signal));
    const b = track(w.wait(clock.now() + 10_000, w.seen, signal));
    await settle();
    expect([a.done, b.done]).toEqual([false, false]);
    w.wake();
    await settle();
    expect([a.done, b.done]).toEqual([true, true]);
    expect(clock.pending()).toBe(0);
  });

  it('does not lose a wake-up that came before the wait began', async () => {
    const clock = newClock();
    const w = new Wakeup(clock);
    const seen = w.seen;
    w.wake();
    const s = track(w.wait(null, seen, new AbortController().signal));
    await settle();
    expect(s.done).toBe(true);
  });

  it('rejects with the abort reason', async () => {
    const clock = newClock();
    const w = new Wakeup(clock);
    const controller = new AbortController();
    const s = track(w.wait(clock.now() + 1000, w.seen, controller.signal));
    const reason = new Error('stop');
    controller.abort(reason);
    await settle();
    expect(s.error).toBe(reason);
    expect(clock.pending()).toBe(0);
  });
});
