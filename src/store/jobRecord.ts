/** A job row (table job) as the rest of crm-sync sees it, and its priorities. */
import type { Priority } from '../budget/types.js';

export type JobState = 'queued' | 'running' | 'done' | 'failed';

/** Higher runs first: context for a live call, then write-back, then backfill. */
export const JOB_PRIORITY: Record<Priority, number> = { live: 300, writeback: 200, backfill: 100 };

export interface JobRecord {
  id: number;
  kind: string;
  key: string | null;
  payload: unknown;
  priority: number;
  state: JobState;
  /** Tries started (a claim counts one). */
  attempts: number;
  maxAttempts: number;
  runAt: Date;
  lockedBy: string | null;
  lockedUntil: Date | null;
  /** The lease's epoch: one more on every claim (src/store/fence.ts). */
  epoch: number;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A job row as raw SQL returns it. */
export interface JobRow {
  id: bigint;
  kind: string;
  key: string | null;
  payload: unknown;
  priority: number;
  state: string;
  attempts: number;
  max_attempts: number;
  run_at: Date;
  locked_by: string | null;
  locked_until: Date | null;
  epoch: bigint;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
}

const JOB_STATES: readonly string[] = ['queued', 'running', 'done', 'failed'];

export function toJob(row: JobRow): JobRecord {
  if (!JOB_STATES.includes(row.state)) throw new Error(`job ${row.id}: unknown state "${row.state}"`);
  return {
    id: Number(row.id),
    kind: row.kind,
    key: row.key,
    payload: row.payload,
    priority: row.priority,
    state: row.state as JobState,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    runAt: row.run_at,
    lockedBy: row.locked_by,
    lockedUntil: row.locked_until,
    epoch: Number(row.epoch),
    lastError: row.last_error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
