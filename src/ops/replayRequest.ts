/**
 * What an operator asks to replay, from CLI flags, the admin API's JSON or a console form: one
 * call, or failed calls (all, by error code, by the time window they failed in). Parsed here once
 * so every entry point accepts and refuses the same things.
 */
import type { FailedSelection } from '../store/syncStatusQueries.js';

export type ReplayRequest = ({ callId: string } | { failed: FailedSelection }) & {
  /**
   * Ask the Service for follow-ups again for replayed calls that have none (stored or in the CRM),
   * even when their generation was answered or ended uncertain: only when the operator says so.
   */
  regenerateFollowups: boolean;
};

export class ReplayRequestError extends Error {
  readonly code = 'REPLAY_BAD_REQUEST';
}

export interface ReplayInput {
  callId?: unknown;
  failed?: unknown;
  code?: unknown;
  since?: unknown;
  until?: unknown;
  /** true, "true" or a checked checkbox's "on". */
  regenerateFollowups?: unknown;
}

export function parseReplayRequest(input: ReplayInput): ReplayRequest {
  const regenerateFollowups = [true, 'true', 'on'].includes(input.regenerateFollowups as string);
  const callId = text(input.callId);
  const code = text(input.code);
  const all = input.failed === true || input.failed === 'true';
  if (callId !== undefined) {
    // Silently dropping the rest would replay something other than what was asked.
    if (all || code !== undefined || text(input.since) !== undefined || text(input.until) !== undefined) {
      throw new ReplayRequestError(
        'a call id replays that one call: give it alone, or failed, a code or a time window without it',
      );
    }
    return { callId, regenerateFollowups };
  }
  const since = time(input.since, 'since');
  const until = time(input.until, 'until');
  if (since && until && since >= until) throw new ReplayRequestError('since must be before until');
  if (!all && code === undefined && since === undefined && until === undefined) {
    throw new ReplayRequestError('give a call id, or failed, a code, or a time window (since/until)');
  }
  return { failed: { code, since, until }, regenerateFollowups };
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

function time(value: unknown, name: string): Date | undefined {
  const v = text(value);
  if (v === undefined) return undefined;
  // Times without a zone (a browser's datetime-local field) are UTC, like everything crm-sync shows.
  const at = new Date(/T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(v) ? `${v}Z` : v);
  if (Number.isNaN(at.getTime())) {
    throw new ReplayRequestError(`${name}: expected a date or time such as 2026-01-31 or 2026-01-31T09:00Z`);
  }
  return at;
}
