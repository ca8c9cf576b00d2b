/**
 * How calls move and which events that emits (driven by the admin API and the follow-up POST):
 * created -> in_progress (call.started); complete -> completed (call.completed), transcript made ->
 * processing (transcript.ready), after `analysisDelayMs` -> analyzed (analysis.ready).
 */
import type { Clock } from '../clock.js';
import { makeFollowupDrafts, type FollowupRequestBody } from './content.js';
import type { EmitEvent } from './events.js';
import { hexId, intBetween, pick, seededRandom, type Random } from './rng.js';
import { callRandom, fillContent, makeParticipant, newCallRecord, SANDBOX_PARTICIPANTS } from './seed.js';
import type { SandboxState } from './state.js';
import { callToJson, type CallRecord, type FollowupDraft, type Participant } from './types.js';

export interface LifecycleDeps {
  state: SandboxState;
  clock: Clock;
  emit: EmitEvent;
  seed: number;
  analysisDelayMs: number;
}

export type LifecycleResult<T> =
  { ok: true; value: T } | { ok: false; status: number; code: string; message: string };

export class CallLifecycle {
  private readonly random: Random;
  private readonly timers = new Set<unknown>();
  /** Calls whose analysis is scheduled, so a second complete cannot emit analysis.ready twice. */
  private readonly analysing = new Set<string>();
  private followupCount = 0;

  constructor(private readonly deps: LifecycleDeps) {
    this.random = seededRandom(deps.seed ^ 0x5eed);
  }

  /** A new in_progress call, created after every existing one; emits call.started. */
  createCall(input: { id?: string; participant?: Participant }): LifecycleResult<CallRecord> {
    const { state, clock } = this.deps;
    const id = input.id ?? `call_${hexId(this.random, 16)}`;
    if (state.getCall(id))
      return { ok: false, status: 409, code: 'call_exists', message: `call ${id} exists` };
    const participant =
      input.participant ??
      (this.random() < 0.5 ? pick(this.random, SANDBOX_PARTICIPANTS) : makeParticipant(this.random));
    // Strictly increasing created_at: a new call must never sort before a cursor already handed out.
    const createdAtMs = Math.max(clock.now(), state.latestCreatedAtMs() + 1);
    const call = newCallRecord(id, createdAtMs, { ...participant }, callRandom(this.deps.seed, id, 'call'));
    state.addCall(call);
    this.deps.emit('call.started', { call_id: id, call: callToJson(call) });
    return { ok: true, value: call };
  }

  /**
   * Ends a scheduled or running call (or finishes one stuck in completed/processing). The
   * analysis lands after `analysisDelayMs` on the clock.
   */
  completeCall(id: string): LifecycleResult<CallRecord> {
    const { state, clock, emit, seed } = this.deps;
    const call = state.getCall(id);
    if (!call) return { ok: false, status: 404, code: 'call_not_found', message: `no call ${id}` };
    if (call.status === 'analyzed' || call.status === 'failed' || this.analysing.has(id)) {
      return {
        ok: false,
        status: 409,
        code: 'invalid_state',
        message: `call ${id} is ${call.status} already`,
      };
    }
    if (call.status === 'scheduled' || call.status === 'in_progress') {
      const elapsed = Math.round((clock.now() - call.createdAtMs) / 1000);
      call.durationSeconds =
        elapsed >= 60 ? elapsed : intBetween(callRandom(seed, id, 'duration'), 8 * 60, 55 * 60);
      call.status = 'completed';
      emit('call.completed', { call_id: id, call: callToJson(call) });
    }
    if (call.status === 'completed') {
      fillContent(call, seed, false);
      call.status = 'processing';
      emit('transcript.ready', { call_id: id });
    }
    const analyse = () => {
      fillContent(call, seed, true);
      call.status = 'analyzed';
      emit('analysis.ready', { call_id: id, call: callToJson(call) });
    };
    // No delay means no window at all in which a listing shows the call processing.
    if (this.deps.analysisDelayMs <= 0) {
      analyse();
      return { ok: true, value: call };
    }
    this.analysing.add(id);
    const timer = clock.setTimer(() => {
      this.timers.delete(timer);
      this.analysing.delete(id);
      analyse();
    }, this.deps.analysisDelayMs);
    this.timers.add(timer);
    return { ok: true, value: call };
  }

  /**
   * Puts a call in any status at once, emitting nothing (the Service sends no event for a call
   * that fails or is cancelled; for the others this models a lost webhook). A finished status gets
   * the content it implies: completed/processing a transcript, analyzed the analysis too.
   */
  setStatus(id: string, status: string): LifecycleResult<CallRecord> {
    const { state, seed } = this.deps;
    const call = state.getCall(id);
    if (!call) return { ok: false, status: 404, code: 'call_not_found', message: `no call ${id}` };
    if (['completed', 'processing', 'analyzed'].includes(status)) {
      call.durationSeconds ??= intBetween(callRandom(seed, id, 'duration'), 8 * 60, 55 * 60);
      fillContent(call, seed, status === 'analyzed');
    }
    call.status = status;
    return { ok: true, value: call };
  }

  /** New drafts on every call (as the real Service does); emits followup.generated per draft. */
  generateFollowups(call: CallRecord, request: FollowupRequestBody): FollowupDraft[] {
    const { state, clock, emit, seed } = this.deps;
    this.followupCount++;
    const random = callRandom(seed, call.id, `followup-${this.followupCount}`);
    const drafts = makeFollowupDrafts(call, request, random, clock.now());
    state.addFollowups(call.id, drafts);
    for (const draft of drafts) emit('followup.generated', { call_id: call.id, followup: draft });
    return drafts;
  }

  close(): void {
    for (const timer of this.timers) this.deps.clock.clearTimer(timer);
    this.timers.clear();
  }
}
