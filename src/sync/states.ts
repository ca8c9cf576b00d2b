/**
 * The states of one call's sync with one CRM, and the only moves between them (pure; the store
 * refuses any other). The table as a diagram: docs/persistence.md, "Sync states"; why every active
 * state exits to both ends, and syncPath: docs/reliability.md, "Every call reaches an end".
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
  // Back to awaiting_analysis when the CRM write finds the analysis not ready after all; skipped
  // when the retry of an interrupted write finds nothing to write to (the contact merged away).
  writing_back: ['written_back', 'awaiting_analysis', 'skipped', 'failed'],
  // Operator resync: the stored CRM ids turn the second write into an update.
  written_back: ['awaiting_analysis'],
  // Operator replay; awaiting_analysis first, so syncPath resumes a failed call there.
  failed: ['awaiting_analysis', 'discovered'],
  skipped: ['discovered'],
};

/** States the worker leaves a call in: only an operator (replay, resync) moves it on. */
export function isEndState(state: SyncState): boolean {
  return !ACTIVE_SYNC_STATES.includes(state);
}

/**
 * The shortest way the table allows from `from` to `to`: the states moved through, `to` last ([]
 * when the call is there already), or null when there is none. Breadth-first in the table's order,
 * so a pair always takes the same path. Every move of more than one step goes this way.
 */
export function syncPath(from: SyncState, to: SyncState): SyncState[] | null {
  const cameFrom = new Map<SyncState, SyncState | null>([[from, null]]);
  const queue: SyncState[] = [from];
  for (let at = queue.shift(); at !== undefined; at = queue.shift()) {
    if (at === to) {
      const path: SyncState[] = [];
      for (let s: SyncState | null = to; s !== null && s !== from; s = cameFrom.get(s) ?? null)
        path.unshift(s);
      return path;
    }
    for (const next of TRANSITIONS[at]) {
      if (!cameFrom.has(next)) {
        cameFrom.set(next, at);
        queue.push(next);
      }
    }
  }
  return null;
}

/**
 * Where an operator's replay puts the call: the states before writing_back on its path there
 * (failed and written_back: awaiting_analysis; skipped: discovered). An active call stays.
 */
export function replayPath(from: SyncState): SyncState[] {
  return (syncPath(from, 'writing_back') ?? []).slice(0, -1);
}

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
