/**
 * The states of one call's sync with one CRM, and the only moves between them. Pure: the store
 * (src/store/syncStatusRepo.ts) refuses any update this table does not allow.
 *
 *   discovered ──> context_pushed ──> awaiting_analysis ──> writing_back ──> written_back
 *   discovered ──> awaiting_analysis | writing_back        (a call found already finished)
 *   discovered | context_pushed | awaiting_analysis ──> skipped
 *   any active state ──> failed;  writing_back ──> awaiting_analysis (analysis not ready)
 *   operator: written_back ──> awaiting_analysis (resync), failed ──> discovered | awaiting_analysis,
 *             skipped ──> discovered (replay)
 */
export const SYNC_STATES = [
  /** Seen in the Service's list or a webhook; nothing done yet. */
  'discovered',
  /** CRM context was pushed to the Service for a live call. */
  'context_pushed',
  /** The call is over (or was found finished); waiting for the Service's analysis. */
  'awaiting_analysis',
  /**
   * Writing the activity and follow-ups to the CRM. Entered BEFORE the first CRM write, so a
   * crash mid-write is visible: the retry upserts on the call id instead of creating twice.
   */
  'writing_back',
  /** Activity and follow-ups are in the CRM (ids in crm_*). */
  'written_back',
  /** Gave up: a permanent error, or retries exhausted. An operator can replay it. */
  'failed',
  /** Nothing to write: no participant email, no CRM match, or the call itself failed. */
  'skipped',
] as const;

export type SyncState = (typeof SYNC_STATES)[number];

/** States the worker still has work for (the rest wait for an operator). */
export const ACTIVE_SYNC_STATES: readonly SyncState[] = [
  'discovered',
  'context_pushed',
  'awaiting_analysis',
  'writing_back',
];

const TRANSITIONS: Record<SyncState, readonly SyncState[]> = {
  discovered: ['context_pushed', 'awaiting_analysis', 'writing_back', 'skipped', 'failed'],
  context_pushed: ['awaiting_analysis', 'writing_back', 'skipped', 'failed'],
  awaiting_analysis: ['writing_back', 'skipped', 'failed'],
  // Back to awaiting_analysis when the CRM write finds the analysis not ready after all.
  writing_back: ['written_back', 'awaiting_analysis', 'failed'],
  // Operator resync: the stored CRM ids turn the second write into an update.
  written_back: ['awaiting_analysis'],
  // Operator replay.
  failed: ['discovered', 'awaiting_analysis'],
  skipped: ['discovered'],
};

export function isSyncState(value: string): value is SyncState {
  return (SYNC_STATES as readonly string[]).includes(value);
}

/** The states `from` may move to. */
export function nextSyncStates(from: SyncState): readonly SyncState[] {
  return TRANSITIONS[from];
}

/** Whether `from -> to` is allowed. Staying in the same state is not a transition. */
export function canTransition(from: SyncState, to: SyncState): boolean {
  return TRANSITIONS[from].includes(to);
}

/** Thrown for a move the table does not allow; the row is left unchanged. */
export class IllegalTransitionError extends Error {
  readonly code = 'SYNC_ILLEGAL_TRANSITION';
  constructor(
    readonly callId: string,
    readonly from: string,
    readonly to: string,
  ) {
    super(`call ${callId}: sync state cannot move from ${from} to ${to}`);
    this.name = 'IllegalTransitionError';
  }
}

/** Throws IllegalTransitionError unless `from -> to` is allowed. */
export function assertTransition(callId: string, from: string, to: SyncState): void {
  if (!isSyncState(from) || !canTransition(from, to)) throw new IllegalTransitionError(callId, from, to);
}
