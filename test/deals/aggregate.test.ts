import { describe, expect, it } from 'vitest';
import {
  aggregateDeal,
  callViews,
  dealCallFacts,
  isNewer,
  newestFirst,
  type DealCallFacts,
} from '../../src/deals/aggregate.js';
import type { Analysis, Call } from '../../src/service/types.js';

const at = (iso: string) => Date.parse(iso);

function facts(callId: string, startedIso: string, over: Partial<DealCallFacts> = {}): DealCallFacts {
  return {
    callId,
    startedAt: at(startedIso),
    overallScore: null,
    objectionsDetected: null,
    objectionsHandled: null,
    nextSteps: [],
    ...over,
  };
}

const A = facts('call_a', '2025-03-01T09:00:00Z', {
  overallScore: 50,
  objectionsDetected: 3,
  objectionsHandled: 1,
  nextSteps: ['Send pricing'],
});
const B = facts('call_b', '2025-03-02T09:00:00Z', {
  overallScore: 70,
  objectionsDetected: 2,
  objectionsHandled: 2,
  nextSteps: ['Book the demo', 'Loop in legal'],
});
const C = facts('call_c', '2025-03-03T09:00:00Z', {
  overallScore: 90,
  objectionsDetected: 1,
  objectionsHandled: 0,
});

describe('deal signals over a deal’s calls', () => {
  it('takes the last values from the newest call by start time, whatever order the calls came in', () => {
    for (const order of [
      [A, B, C],
      [C, A, B],
      [B, C, A],
      [C, B, A],
    ]) {
      const s = aggregateDeal(order, 3);
      expect(s.last_call_id).toBe('call_c');
      expect(s.last_call_at).toBe('2025-03-03T09:00:00.000Z');
      expect(s.last_score).toBe(90);
      expect(s.call_count).toBe(3);
    }
  });

  it('averages the overall score of the newest N scored calls', () => {
    expect(aggregateDeal([A, B, C], 3)).toMatchObject({ average_score: 70, average_count: 3 });
    expect(aggregateDeal([A, B, C], 2)).toMatchObject({ average_score: 80, average_count: 2 });
    // An unscored newest call is skipped, not counted as zero.
    const unscored = facts('call_d', '2025-03-04T09:00:00Z');
    expect(aggregateDeal([A, B, C, unscored], 2)).toMatchObject({
      last_score: null,
      average_score: 80,
      average_count: 2,
    });
    expect(aggregateDeal([unscored], 3)).toMatchObject({ average_score: null, average_count: 0 });
  });

  it('counts open objections as detected minus handled over all calls, never below zero', () => {
    // (3 + 2 + 1) detected - (1 + 2 + 0) handled
    expect(aggregateDeal([A, B, C], 3).open_objections).toBe(3);
    const overHandled = facts('call_x', '2025-03-05T09:00:00Z', {
      objectionsDetected: 0,
      objectionsHandled: 9,
    });
    expect(aggregateDeal([C, overHandled], 3).open_objections).toBe(0);
    // Unknown counts add nothing.
    expect(aggregateDeal([facts('call_y', '2025-03-05T09:00:00Z')], 3).open_objections).toBe(0);
  });

  it('takes the next steps of the newest call that named any', () => {
    expect(aggregateDeal([A, B, C], 3).last_next_step).toBe('Book the demo; Loop in legal');
    expect(aggregateDeal([A], 3).last_next_step).toBe('Send pricing');
    expect(aggregateDeal([C], 3).last_next_step).toBeNull();
  });

  it('a replayed older call changes nothing; a copy with new facts replaces the earlier one', () => {
    expect(aggregateDeal([A, B, C, A, B], 3)).toEqual(aggregateDeal([A, B, C], 3));
    const rescored = { ...C, overallScore: 10 };
    expect(aggregateDeal([A, B, C, rescored], 3).last_score).toBe(10);
  });

  it('has nothing to say about a deal without calls', () => {
    expect(aggregateDeal([], 3)).toEqual({
      call_count: 0,
      last_call_id: null,
      last_call_at: null,
      last_score: null,
      average_score: null,
      average_count: 0,
      open_objections: 0,
      last_next_step: null,
    });
  });

  it('orders calls that started at the same moment by call id, so every process agrees', () => {
    const x = facts('call_x', '2025-03-01T09:00:00Z');
    const y = facts('call_y', '2025-03-01T09:00:00Z');
    expect(isNewer(y, x)).toBe(true);
    expect(isNewer(x, y)).toBe(false);
    expect(isNewer(x, x)).toBe(false);
    expect(newestFirst([x, y]).map((c) => c.callId)).toEqual(['call_y', 'call_x']);
    expect(callViews([A, C, B]).map((c) => c.call_id)).toEqual(['call_c', 'call_b', 'call_a']);
  });
});

describe('the facts a deal keeps of one call', () => {
  const call = (over: Partial<Call> = {}): Call =>
    ({ id: 'call_1', status: 'analyzed', created_at: '2025-03-01T09:00:00Z', ...over }) as Call;
  const analysis = (over: Partial<Analysis> = {}): Analysis =>
    ({
      call_id: 'call_1',
      scoring: { overall: 81 },
      objections: [
        { type: 'price', text: 'too dear', handled: true },
        { type: 'timing', text: 'next quarter', handled: false },
        { type: 'authority', text: 'ask my boss', handled: null },
      ],
      next_steps: [' Send the contract ', ''],
      ...over,
    }) as Analysis;

  it('reads the score, objections and next steps from the analysis', () => {
    expect(dealCallFacts(call(), analysis())).toEqual({
      callId: 'call_1',
      startedAt: Date.parse('2025-03-01T09:00:00Z'),
      overallScore: 81,
      objectionsDetected: 3,
      objectionsHandled: 1,
      nextSteps: ['Send the contract'],
    });
  });

  it("prefers the call's own objection counts, and falls back to its scoring", () => {
    const facts = dealCallFacts(
      call({ objections_detected: 5, objections_handled: 4, scoring: { overall: 60 } }),
      analysis({ scoring: null }),
    );
    expect(facts).toMatchObject({ overallScore: 60, objectionsDetected: 5, objectionsHandled: 4 });
  });

  it('leaves out a call whose start cannot be read (it cannot be ordered)', () => {
    expect(dealCallFacts(call({ created_at: 'yesterday' }), analysis())).toBeNull();
  });

  it('knows nothing of objections when neither the call nor an analysis says', () => {
    expect(dealCallFacts(call(), null)).toMatchObject({
      overallScore: null,
      objectionsDetected: null,
      objectionsHandled: null,
      nextSteps: [],
    });
  });
});
