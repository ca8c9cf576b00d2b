/** The silence and drift conditions and their thresholds, with defaults (detectors: src/drift/detectors.ts). */

export type DriftCondition = 'webhook_silence' | 'service_behind' | 'no_match_rise';
export const DRIFT_CONDITIONS: readonly DriftCondition[] = [
  'webhook_silence',
  'service_behind',
  'no_match_rise',
];

/** Configured by WEBHOOK_SILENCE_MINUTES, ANALYSIS_LAG_MINUTES, NO_MATCH_* (schema.ts). */
export interface DriftThresholds {
  /** No verified webhook for this long while new calls keep being found; 0 = off. */
  webhookSilenceMs: number;
  /** A call completed this long ago with no analysis.ready yet; 0 = off. */
  analysisLagMs: number;
  /** The recent span whose no-match share is compared with the baseline before it. */
  noMatchWindowMs: number;
  /** Raise when the recent no-match share exceeds the baseline's by this much (0..1); 0 = off. */
  noMatchRise: number;
  /** Matched-or-not calls needed in each of the two spans before the shares are compared. */
  noMatchMinCalls: number;
}

export const DEFAULT_DRIFT_THRESHOLDS: DriftThresholds = {
  webhookSilenceMs: 30 * 60_000,
  analysisLagMs: 2 * 3_600_000,
  noMatchWindowMs: 3_600_000,
  noMatchRise: 0.25,
  noMatchMinCalls: 10,
};
