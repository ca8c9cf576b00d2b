/**
 * Everything the sandbox holds in memory: calls, pushed contexts, follow-up drafts, emitted events,
 * counters and the settings the admin API may change at run time. Tests read it in-process.
 */
import type { PlanLimits } from './plans.js';
import { RequestCounters, type CountersSnapshot } from './counters.js';
import type { FaultRecord } from './faultRecord.js';
import type { FaultSettings } from './faults.js';
import { FaultScripts } from './faultScript.js';
import { compareCalls } from './listing.js';
import type { SlidingWindowLimiter } from './limiter.js';
import type { RetryAfterFormat } from './retryAfter.js';
import {
  callToJson,
  type CallJson,
  type CallRecord,
  type EmittedEvent,
  type FollowupDraft,
} from './types.js';

export interface RuntimeSettings {
  faults: FaultSettings;
  webhookUrl: string | undefined;
  retryAfterFormat: RetryAfterFormat;
  /** Answer `/recording` with a 302 to a signed URL instead of the bytes. */
  recordingRedirect: boolean;
}

export interface PushedContext {
  receivedAt: string;
  body: unknown;
}

/** The limiter key of the main API key (the read-only key has its own windows). */
export const MAIN_KEY = 'main';

export class SandboxState {
  readonly counters = new RequestCounters();
  /** Every event emitted, in emission order, with the exact body sent. */
  readonly events: EmittedEvent[] = [];
  /** Every faulted API request and what it really did (the truth a chaos check compares with). */
  readonly faultLog: FaultRecord[] = [];
  readonly faultScripts = new FaultScripts();
  private readonly sorted: CallRecord[] = [];
  private readonly byId = new Map<string, CallRecord>();
  private readonly contextsById = new Map<string, PushedContext[]>();
  private readonly followupsById = new Map<string, FollowupDraft[]>();

  constructor(
    readonly settings: RuntimeSettings,
    readonly limiter: SlidingWindowLimiter,
  ) {}

  addCall(call: CallRecord): void {
    if (this.byId.has(call.id)) throw new Error(`call ${call.id} exists`);
    this.byId.set(call.id, call);
    let i = this.sorted.length;
    while (i > 0 && compareCalls(this.sorted[i - 1] as CallRecord, call) > 0) i--;
    this.sorted.splice(i, 0, call);
  }

  getCall(id: string): CallRecord | undefined {
    return this.byId.get(id);
  }

  /** Calls ordered by created_at, then id. */
  calls(): readonly CallRecord[] {
    return this.sorted;
  }

  /** A call as the API shows it, or undefined. */
  callJson(id: string): CallJson | undefined {
    const call = this.byId.get(id);
    return call && callToJson(call);
  }

  /** The newest created_at, so that new calls sort after every existing one. */
  latestCreatedAtMs(): number {
    return this.sorted[this.sorted.length - 1]?.createdAtMs ?? 0;
  }

  addContext(callId: string, context: PushedContext): void {
    const list = this.contextsById.get(callId) ?? [];
    list.push(context);
    this.contextsById.set(callId, list);
  }

  /** Every context body pushed for the call, in order. */
  contexts(callId: string): PushedContext[] {
    return [...(this.contextsById.get(callId) ?? [])];
  }

  addFollowups(callId: string, drafts: FollowupDraft[]): void {
    this.followupsById.set(callId, [...(this.followupsById.get(callId) ?? []), ...drafts]);
  }

  followups(callId: string): FollowupDraft[] {
    return [...(this.followupsById.get(callId) ?? [])];
  }

  countersSnapshot(): CountersSnapshot {
    return this.counters.snapshot(this.limiter.usedToday(MAIN_KEY));
  }

  limits(): PlanLimits {
    return this.limiter.getLimits();
  }
}
