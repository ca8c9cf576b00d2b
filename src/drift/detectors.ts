/**
 * Silence and drift detectors: pure verdicts over facts the worker already stores (read by
 * facts.ts), at a given time. Each condition is raised while its facts say so and cleared as soon
 * as they stop; a threshold of 0 turns its detector off.
 */
import type { DriftCondition, DriftThresholds } from '../config/drift.js';

export interface DriftWarning {
  condition: DriftCondition;
  /** Stable code for docs and searches. */
  code: 'WEBHOOK_SILENCE' | 'SERVICE_BEHIND' | 'NO_MATCH_RISE';
  message: string;
}

/** The baseline the recent no-match share is compared with: the 7 days before the recent span. */
export const NO_MATCH_BASELINE_MS = 7 * 86_400_000;

/** Calls whose match was decided in a span, and how many of them matched nothing. */
export interface MatchCounts {
  calls: number;
  none: number;
}

export interface DriftFacts {
  lastVerifiedWebhookAt: Date | null;
  /** Calls that happened within the webhook-silence window (created at the Service, else first seen). */
  callsInSilenceWindow: number;
  /**
   * Calls the Service says are completed (or processing) with no analysis.ready stored: since when
   * each is known to be completed, oldest first.
   */
  awaitingAnalysisSince: Date[];
  noMatch: { recent: MatchCounts; baseline: MatchCounts };
}

function minutes(ms: number): string {
  return ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : `${Math.round(ms / 60_000)} min`;
}

function percent(share: number): string {
  return `${Math.round(share * 100)}%`;
}

export function detectWebhookSilence(
  facts: Pick<DriftFacts, 'lastVerifiedWebhookAt' | 'callsInSilenceWindow'>,
  t: Pick<DriftThresholds, 'webhookSilenceMs'>,
  nowMs: number,
): DriftWarning | null {
  if (t.webhookSilenceMs <= 0 || facts.callsInSilenceWindow === 0) return null;
  const last = facts.lastVerifiedWebhookAt?.getTime();
  if (last !== undefined && nowMs - last <= t.webhookSilenceMs) return null;
  const fix = 'check the webhook URL and SERVICE_WEBHOOK_SECRET at the Service.';
  return {
    condition: 'webhook_silence',
    code: 'WEBHOOK_SILENCE',
    message:
      last === undefined
        ? `No verified webhook has ever arrived, but ${facts.callsInSilenceWindow} call(s) were found by polling in the last ${minutes(t.webhookSilenceMs)}: ${fix}`
        : `No verified webhook for over ${minutes(t.webhookSilenceMs)} (last ${new Date(last).toISOString()}), but ${facts.callsInSilenceWindow} call(s) were found by polling: ${fix}`,
  };
}

export function detectServiceBehind(
  facts: Pick<DriftFacts, 'awaitingAnalysisSince'>,
  t: Pick<DriftThresholds, 'analysisLagMs'>,
  nowMs: number,
): DriftWarning | null {
  if (t.analysisLagMs <= 0) return null;
  const late = facts.awaitingAnalysisSince.filter((d) => nowMs - d.getTime() > t.analysisLagMs);
  if (late.length === 0) return null;
  const oldest = late.reduce((a, b) => (a < b ? a : b));
  return {
    condition: 'service_behind',
    code: 'SERVICE_BEHIND',
    message:
      `${late.length} call(s) completed over ${minutes(t.analysisLagMs)} ago have no analysis yet ` +
      `(oldest since ${oldest.toISOString()}): the Service is behind; they are written when it catches up.`,
  };
}

export function detectNoMatchRise(
  facts: Pick<DriftFacts, 'noMatch'>,
  t: Pick<DriftThresholds, 'noMatchRise' | 'noMatchMinCalls' | 'noMatchWindowMs'>,
): DriftWarning | null {
  const { recent, baseline } = facts.noMatch;
  if (t.noMatchRise <= 0) return null;
  const enough = Math.max(1, t.noMatchMinCalls);
  if (recent.calls < enough || baseline.calls < enough) return null;
  const now = recent.none / recent.calls;
  const before = baseline.none / baseline.calls;
  if (now - before < t.noMatchRise) return null;
  return {
    condition: 'no_match_rise',
    code: 'NO_MATCH_RISE',
    message:
      `${percent(now)} of the calls of the last ${minutes(t.noMatchWindowMs)} matched no CRM record ` +
      `(${recent.none} of ${recent.calls}), against ${percent(before)} over the week before: ` +
      'a mapping or CRM change may have broken matching (crm-sync match EMAIL explains one).',
  };
}

export function detectDrift(facts: DriftFacts, t: DriftThresholds, nowMs: number): DriftWarning[] {
  return [
    detectWebhookSilence(facts, t, nowMs),
    detectServiceBehind(facts, t, nowMs),
    detectNoMatchRise(facts, t),
  ].filter((w): w is DriftWarning => w !== null);
}
