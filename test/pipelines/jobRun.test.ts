/**
 * A job run's side-effect gate (src/pipelines/jobRun.ts): what a stopping worker still lets
 * through, what a lost lease never does, and when stop() may hand the job back.
 */
import { describe, expect, it } from 'vitest';
import { LeaseLostError } from '../../src/store/fence.js';
import { createJobRun, RunStoppedError, sideEffect, stillGoing } from '../../src/pipelines/jobRun.js';

const fence = { jobId: 7, epoch: 3 };

describe('job run', () => {
  it('a stopping worker refuses new side effects but lets one that finishes a made one go', () => {
    const run = createJobRun(fence);
    run.stop(new RunStoppedError());
    expect(() => run.begin()).toThrow(RunStoppedError);
    // The follow-up request after the generation stamp is in the CRM (857f89a): refusing it
    // would leave the call stamped as asked and without drafts.
    const end = run.begin(true);
    expect(run.inFlight).toBe(1);
    end();
    expect(run.inFlight).toBe(0);
  });

  it('a run that lost its lease refuses every side effect, finishing ones too', () => {
    const run = createJobRun(fence);
    run.stop(new LeaseLostError(fence, 'the rest of the run'));
    expect(() => run.begin()).toThrow(LeaseLostError);
    expect(() => run.begin(true)).toThrow(LeaseLostError);
    expect(run.inFlight).toBe(0);
  });

  it('settles only when every side effect in flight has ended, each end counted once', async () => {
    const run = createJobRun(fence);
    const first = run.begin();
    const second = run.begin();
    let settled = false;
    const waiting = run.settled().then(() => {
      settled = true;
    });
    first();
    first();
    await Promise.resolve();
    expect(settled).toBe(false);
    second();
    await waiting;
    expect(settled).toBe(true);
  });

  it('sideEffect does nothing for a batch holding a stopped run, and stillGoing sets it apart', async () => {
    const going = createJobRun(fence);
    const stopped = createJobRun({ jobId: 8, epoch: 1 });
    stopped.stop(new RunStoppedError());
    let calls = 0;
    await expect(
      sideEffect([going, stopped], async () => {
        calls++;
      }),
    ).rejects.toThrow(RunStoppedError);
    expect(calls).toBe(0);
    const split = stillGoing([going, stopped], (run) => run);
    expect(split.going).toEqual([going]);
    expect(split.stopped.map((s) => s.item)).toEqual([stopped]);
    await sideEffect(split.going, async () => {
      calls++;
    });
    expect(calls).toBe(1);
    expect(going.inFlight).toBe(0);
  });
});
