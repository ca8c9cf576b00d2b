import { describe, expect, it } from 'vitest';
import { DEFAULT_DRIFT_THRESHOLDS as T } from '../../src/config/drift.js';
import { detectNoMatchRise, detectServiceBehind, detectWebhookSilence } from '../../src/drift/detectors.js';

const NOW = Date.UTC(2026, 0, 10, 12);
const MIN = 60_000;

describe('webhook silence detector', () => {
  const silent = { lastVerifiedWebhookAt: new Date(NOW - 31 * MIN), callsInSilenceWindow: 3 };
  it('raises past the threshold while calls happen, and when no webhook ever came', () => {
    expect(detectWebhookSilence(silent, T, NOW)?.code).toBe('WEBHOOK_SILENCE');
    expect(detectWebhookSilence({ ...silent, lastVerifiedWebhookAt: null }, T, NOW)?.message).toMatch(
      /^No verified webhook has ever arrived/,
    );
  });
  it('stays quiet within the threshold, with no calls, or when turned off', () => {
    expect(
      detectWebhookSilence({ ...silent, lastVerifiedWebhookAt: new Date(NOW - 29 * MIN) }, T, NOW),
    ).toBeNull();
    expect(detectWebhookSilence({ ...silent, callsInSilenceWindow: 0 }, T, NOW)).toBeNull();
    expect(detectWebhookSilence(silent, { webhookSilenceMs: 0 }, NOW)).toBeNull();
  });
});

describe('Service-behind detector', () => {
  it('counts only calls waiting longer than the lag', () => {
    const since = [
      new Date(NOW - 3 * 60 * MIN),
      new Date(NOW - 2 * 60 * MIN - MIN),
      new Date(NOW - 10 * MIN),
    ];
    expect(detectServiceBehind({ awaitingAnalysisSince: since }, T, NOW)?.message).toMatch(
      /^2 call\(s\) completed over 2 h ago/,
    );
    expect(detectServiceBehind({ awaitingAnalysisSince: since.slice(2) }, T, NOW)).toBeNull();
    expect(detectServiceBehind({ awaitingAnalysisSince: since }, { analysisLagMs: 0 }, NOW)).toBeNull();
  });
});

describe('no-match rise detector', () => {
  const counts = (recent: [number, number], baseline: [number, number]) => ({
    noMatch: {
      recent: { calls: recent[0], none: recent[1] },
      baseline: { calls: baseline[0], none: baseline[1] },
    },
  });
  it('raises when the recent share exceeds the baseline by the rise', () => {
    expect(detectNoMatchRise(counts([10, 4], [100, 10]), T)?.code).toBe('NO_MATCH_RISE'); // 40% vs 10%
  });
  it('stays quiet for a smaller rise, too few calls on either side, or when off', () => {
    expect(detectNoMatchRise(counts([10, 3], [100, 10]), T)).toBeNull(); // 30% vs 10%: +20 points
    expect(detectNoMatchRise(counts([9, 9], [100, 10]), T)).toBeNull();
    expect(detectNoMatchRise(counts([10, 9], [9, 0]), T)).toBeNull();
    expect(detectNoMatchRise(counts([10, 9], [100, 10]), { ...T, noMatchRise: 0 })).toBeNull();
  });
});
