/** The write-back's shared types: a job's item, a call prepared for its CRM write, a job's result. */
import type { Priority } from '../budget/types.js';
import type { CrmLookup } from '../crm/types.js';
import type { Analysis, Call } from '../service/types.js';
import type { DraftInput } from '../store/followupRepo.js';
import type { WritebackJobPayload } from '../store/jobKinds.js';
import type { JobRun } from './jobRun.js';

export type WritebackResult =
  | { kind: 'done'; detail: string }
  | { kind: 'later'; delayMs: number; detail: string }
  | { kind: 'error'; error: unknown };

export interface WritebackItem {
  jobId: number;
  payload: WritebackJobPayload;
  priority: Priority;
  /** The job run: its lease fences the item's writes, its signal stops its side effects (jobRun.ts). */
  run?: JobRun | undefined;
}

export interface PreparedWrite {
  item: WritebackItem;
  callId: string;
  call: Call;
  analysis: Analysis;
  lookup: CrmLookup;
  drafts: DraftInput[];
  /**
   * Follow-ups are to be asked for, once the activity is written with its generation stamp
   * (writeback/act.ts): for whom, and whether the batch read of the row found a claim already.
   */
  generate?: { email: string; claimed: boolean } | undefined;
  /** The activity is already written; only drafts that arrived since are to be written. */
  followupsOnly: boolean;
  /** Optional mapped fields left out of this write, for the call's warnings. */
  warnings: string[];
}
