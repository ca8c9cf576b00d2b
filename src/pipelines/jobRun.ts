/**
 * A job run as the pipelines see it: its lease (the fence its database writes carry) and the signal
 * that tells it to stop; `sideEffect` refuses a side effect once told and counts those in flight for
 * stop(). Why: docs/reliability.md, "A run that lost its lease is fenced".
 */
import type { Fence } from '../store/fence.js';

export interface JobRun {
  readonly fence: Fence;
  readonly signal: AbortSignal;
  /** Side effects of the run in flight now. */
  readonly inFlight: number;
  /**
   * Starts a side effect: throws the stop reason if the run was told to stop; call the result when
   * it ends. `finishing`: the effect completes one already made (a follow-up request whose
   * generation stamp is in the CRM), so a stopping worker lets it go; a lost lease still stops it.
   */
  begin(finishing?: boolean): () => void;
}

export interface ControlledRun extends JobRun {
  /** Tells the run to stop before its next side effect; `reason` is the error it stops with. */
  stop(reason: Error): void;
  /** Resolves when no side effect of the run is in flight. */
  settled(): Promise<void>;
}

/** The worker is stopping: the run stopped before its next side effect, and its job goes back. */
export class RunStoppedError extends Error {
  readonly code = 'WORKER_STOPPING';
  constructor() {
    super('the worker is stopping: the job goes back to the queue before its next side effect');
    this.name = 'RunStoppedError';
  }
}

export function createJobRun(fence: Fence): ControlledRun {
  const controller = new AbortController();
  let inFlight = 0;
  let waiters: (() => void)[] = [];
  return {
    fence,
    signal: controller.signal,
    get inFlight() {
      return inFlight;
    },
    begin(finishing = false) {
      const stopping = controller.signal.reason instanceof RunStoppedError;
      if (!(finishing && stopping)) controller.signal.throwIfAborted();
      inFlight++;
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        if (--inFlight > 0) return;
        const done = waiters;
        waiters = [];
        for (const w of done) w();
      };
    },
    stop(reason) {
      if (!controller.signal.aborted) controller.abort(reason);
    },
    settled() {
      return inFlight === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));
    },
  };
}

/** Throws the run's stop reason if it was told to stop. */
export function checkRun(run: JobRun | undefined): void {
  run?.signal.throwIfAborted();
}

/**
 * Runs `effect`, one side effect on behalf of `runs` (a batch write serves several); throws, doing
 * nothing, if any of them was told to stop (callers leave those out first: see `stillGoing`).
 */
export async function sideEffect<T>(
  runs: readonly (JobRun | undefined)[],
  effect: () => Promise<T>,
): Promise<T> {
  for (const run of runs) checkRun(run);
  const ends = runs.flatMap((run) => (run ? [run.begin()] : []));
  try {
    return await effect();
  } finally {
    for (const end of ends) end();
  }
}

/** Splits `items` into those whose run may go on and those told to stop, with the reason. */
export function stillGoing<T>(
  items: readonly T[],
  runOf: (item: T) => JobRun | undefined,
): { going: T[]; stopped: { item: T; reason: unknown }[] } {
  const going: T[] = [];
  const stopped: { item: T; reason: unknown }[] = [];
  for (const item of items) {
    const run = runOf(item);
    if (run?.signal.aborted) stopped.push({ item, reason: run.signal.reason });
    else going.push(item);
  }
  return { going, stopped };
}
