import { describe, expect, it } from 'vitest';
import { callPhaseOf, endedReason } from '../../src/pipelines/callStatus.js';
import { ANALYSIS_SAFETY_CHECK_MS, jobsForDiscoveredCall, jobsForEvent } from '../../src/pipelines/route.js';
import { JOB_PRIORITY } from '../../src/store/jobKinds.js';
import { parseWebhookEvent } from '../../src/service/events.js';
import type { Call } from '../../src/service/types.js';

const call = (status: string): Call => ({ id: 'call_1', status, created_at: '2026-11-01T10:00:00Z' }) as Call;
const event = (type: string, extra: Record<string, unknown> = {}) =>
  parseWebhookEvent({
    id: `evt_${type}`,
    type,
    created_at: '2026-11-01T10:00:00Z',
    data: { call_id: 'call_1', ...extra },
  });

describe('jobsForEvent', () => {
  it('call.started queues a live context push keyed on the call', () => {
    const [job, ...rest] = jobsForEvent(event('call.started', { call: call('in_progress') }), 1000);
    expect(rest).toEqual([]);
    expect(job).toMatchObject({ kind: 'context', key: 'context:call_1', priority: JOB_PRIORITY.live });
    expect(job?.payload).toMatchObject({ callId: 'call_1', receivedAt: 1000, eventId: 'evt_call.started' });
  });

  it('analysis.ready queues the write-back now, call.completed only a later safety check', () => {
    const ready = jobsForEvent(event('analysis.ready'), 0)[0];
    const completed = jobsForEvent(event('call.completed'), 0)[0];
    expect(ready).toMatchObject({ kind: 'writeback', key: 'writeback:call_1', delayMs: 0 });
    expect(completed).toMatchObject({
      kind: 'writeback',
      key: 'writeback:call_1',
      delayMs: ANALYSIS_SAFETY_CHECK_MS,
    });
    expect(ready?.priority).toBe(JOB_PRIORITY.writeback);
  });

  it('followup.generated carries the draft to the write-back', () => {
    const draft = { id: 'fu_1', subject: 's', body: 'b', to: ['a@b.example'] };
    const job = jobsForEvent(event('followup.generated', { followup: draft }), 0)[0];
    expect(job?.payload).toMatchObject({ callId: 'call_1', reason: 'followup.generated', followup: draft });
  });

  it('transcript.ready and unknown types cause no work', () => {
    expect(jobsForEvent(event('transcript.ready'), 0)).toEqual([]);
    expect(jobsForEvent(event('call.exploded'), 0)).toEqual([]);
  });
});

describe('jobsForDiscoveredCall', () => {
  it('a live call found by the poller still gets its context, at live priority', () => {
    const jobs = jobsForDiscoveredCall(call('in_progress'), 'poll');
    expect(jobs.map((j) => [j.kind, j.priority])).toEqual([
      ['context', JOB_PRIORITY.live],
      ['writeback', JOB_PRIORITY.backfill],
    ]);
  });

  it('an analysed call is written back at once, a processing one later', () => {
    expect(jobsForDiscoveredCall(call('analyzed'), 'backfill')).toEqual([
      expect.objectContaining({ kind: 'writeback', delayMs: 0, priority: JOB_PRIORITY.backfill }),
    ]);
    expect(jobsForDiscoveredCall(call('processing'), 'poll')[0]?.delayMs).toBe(ANALYSIS_SAFETY_CHECK_MS);
  });

  it('every status gets a job: failed and cancelled at once (to be skipped), unknown ones later', () => {
    for (const status of ['failed', 'cancelled', 'canceled']) {
      expect(jobsForDiscoveredCall(call(status), 'poll')).toEqual([
        expect.objectContaining({ kind: 'writeback', delayMs: 0 }),
      ]);
    }
    expect(jobsForDiscoveredCall(call('on_hold'), 'poll')).toEqual([
      expect.objectContaining({ kind: 'writeback', delayMs: ANALYSIS_SAFETY_CHECK_MS }),
    ]);
  });
});

describe('callPhaseOf', () => {
  it("reads the contract's statuses, treats cancelled as ended and anything else as unknown", () => {
    const phases = [
      'scheduled',
      'in_progress',
      'completed',
      'processing',
      'analyzed',
      'failed',
      'cancelled',
      'on_hold',
      '',
    ];
    expect(phases.map(callPhaseOf)).toEqual([
      'live',
      'live',
      'finished',
      'finished',
      'analyzed',
      'ended',
      'ended',
      'unknown',
      'unknown',
    ]);
    expect(endedReason('failed')).toBe('the call failed at the Service');
    expect(endedReason('cancelled')).toBe('the call was cancelled at the Service (status "cancelled")');
  });
});
