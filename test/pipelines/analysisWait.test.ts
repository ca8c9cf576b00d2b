import { describe, expect, it } from 'vitest';
import { analysisGiveUpReason } from '../../src/pipelines/analysisWait.js';

const H = 3_600_000;
const why = 'the call is completed at the Service, not analysed yet';

describe('giving up on a call the Service has not analysed', () => {
  it('waits up to 48 h after the call', () => {
    expect(analysisGiveUpReason({ ageMs: 47 * H, seenForMs: 47 * H, why })).toBeNull();
    expect(analysisGiveUpReason({ ageMs: 49 * H, seenForMs: 49 * H, why })).toBe(
      `${why} 49 h after the call; gave up`,
    );
    // Found 40 h after the call: 9 h of waiting did happen, and the 48 h since the call passed.
    expect(analysisGiveUpReason({ ageMs: 49 * H, seenForMs: 9 * H, why })).toBe(
      `${why} 49 h after the call; gave up`,
    );
  });

  it('a backfilled call already past 48 h is looked at once, and the reason says so, not "gave up after 48 hours"', () => {
    const reason = analysisGiveUpReason({ ageMs: 30 * 24 * H, seenForMs: 5 * 60_000, why });
    expect(reason).toBe(
      `${why}; the call was already 720 h old when crm-sync found it, past the 48 h it waits for an analysis, so it was looked at once and not waited for`,
    );
    expect(reason).not.toContain('gave up');
  });
});
