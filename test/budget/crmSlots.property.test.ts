/**
 * The CRM slot arithmetic (src/crm/limits/slots.ts) as a property: whatever the requests' timings,
 * and wherever between its start and its answer the CRM counts each one, no window of the CRM's
 * ever holds more than the limit; and the daily estimate never says more remains than does.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideSlot, type HeldSlot, type SlotAsk } from '../../src/crm/limits/slots.js';

const ASK: SlotAsk = {
  lane: 'general',
  limit: 4,
  windowMs: 1_000,
  dailyReserve: 0,
  dailyHold: { kind: 'midnight' },
};

describe('CRM slots (property)', () => {
  it('never lets the CRM count more than the limit in any window', () => {
    const request = fc.record({
      wantsAt: fc.integer({ min: 0, max: 5_000 }),
      takesMs: fc.integer({ min: 1, max: 1_500 }),
      // Where between start and answer the CRM counts it, as a share of the duration.
      countedAt: fc.double({ min: 0, max: 1, noNaN: true }),
    });
    fc.assert(
      fc.property(fc.array(request, { minLength: 1, maxLength: 40 }), (requests) => {
        const slots: HeldSlot[] = [];
        const counted: number[] = [];
        // Each request asks at its time, and again when told to wait, until granted.
        const queue = requests.map((r) => ({ ...r, at: r.wantsAt })).sort((a, b) => a.at - b.at);
        while (queue.length > 0) {
          const r = queue.shift()!;
          // Answers that came by now are known.
          const state = {
            nowMs: r.at,
            slots: slots.map((s) => ({
              ...s,
              doneAt: s.doneAt !== null && s.doneAt <= r.at ? s.doneAt : null,
            })),
            pausedUntil: null,
            pauseReason: null,
            searchPausedUntil: null,
            report: null,
            probeSince: null,
          };
          const d = decideSlot(state, ASK);
          if (d.grant) {
            slots.push({ lane: 'general', startedAt: r.at, doneAt: r.at + r.takesMs });
            counted.push(r.at + r.countedAt * r.takesMs);
          } else {
            expect(d.waitMs).toBeGreaterThan(0);
            queue.push({ ...r, at: r.at + d.waitMs });
            queue.sort((a, b) => a.at - b.at);
          }
        }
        for (const t of counted) {
          const inWindow = counted.filter((u) => u > t - ASK.windowMs && u <= t).length;
          expect(inWindow).toBeLessThanOrEqual(ASK.limit);
        }
      }),
    );
  });
});
