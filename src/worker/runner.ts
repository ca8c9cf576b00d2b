/**
 * The job runner: a live lane for context pushes and a bulk lane that claims write-back jobs in
 * batches, each claim under a renewed lease. Leases, stopping and draining: docs/reliability.md,
 * "The job runner".
 */
import type { Logger } from '../log/logger.js';
import { runContextJob } from '../pipelines/context.js';
import type { PipelineDeps } from '../pipelines/deps.js';
import { budgetPriorityOf, type ContextJobPayload, type WritebackJobPayload } from '../store/jobKinds.js';
import { runWritebackBatch } from '../pipelines/writeback.js';
import { createJobRun, RunStoppedError, type ControlledRun } from '../pipelines/jobRun.js';
import { LeaseLostError } from '../store/fence.js';
import { claimJobs, heartbeatJobs, requeueExpiredJobs, rescheduleJob } from '../store/jobQueue.js';
import { type JobRecord } from '../store/jobRecord.js';
import type { DatabaseKind, Db } from '../store/database.js';
import { runAsLive } from '../store/livePriority.js';
import { retryWhileDatabaseAway } from '../store/whileAway.js';
import type { Clock } from '../util/clock.js';
import {
  applyDone,
  applyTryResult,
  recordExhaustedJobs,
  type OutcomeDeps,
  type TryResult,
} from './jobOutcome.js';

export interface RunnerOptions {
  liveConcurrency: number;
  bulkBatchSize: number;
  bulkConcurrency: number;
  leaseMs: number;
  /** How often an idle lane looks for due jobs (it is also woken when jobs are enqueued here). */
  idlePollMs: number;
}

export const DEFAULT_RUNNER_OPTIONS: RunnerOptions = {
  liveConcurrency: 16,
  bulkBatchSize: 25,
  bulkConcurrency: 2,
  leaseMs: 60_000,
  idlePollMs: 1_000,
};

/**
 * On PostgreSQL four bulk lanes: a write-back batch spends most of its time waiting on round trips
 * (the database's and the CRM's), which other batches can fill; no Service limit, 400 calls: about
 * 40 -> 55 calls/s (docs/performance.md). The embedded database has one connection and runs on
 * this thread, so more lanes only queue there (no gain measured): two.
 */
export function runnerOptionsFor(kind: DatabaseKind): RunnerOptions {
  return kind === 'postgres' ? { ...DEFAULT_RUNNER_OPTIONS, bulkConcurrency: 4 } : DEFAULT_RUNNER_OPTIONS;
}

/**
 * The default bound stop() waits for side effects in flight: above the Service client's request
 * timeout (15 s, config requestTimeoutMs), so a request that started is heard back.
 */
export const DEFAULT_DRAIN_MS = 20_000;

export interface JobRunner {
  start(): void;
  wake(kinds?: Set<string>): void;
  /**
   * Stops claiming; every run stops before its next side effect. Waits up to `drainMs` for the
   * side effects in flight, then hands back the jobs that have none in flight.
   */
  stop(drainMs: number): Promise<void>;
  inFlight(): number;
}

export function createJobRunner(
  deps: {
    pipeline: PipelineDeps;
    outcome: OutcomeDeps;
    clock: Clock;
    logger: Logger;
    /** The live lane's database client (Database.live); default the bulk lane's. */
    liveDb?: Db | undefined;
  },
  options: RunnerOptions = DEFAULT_RUNNER_OPTIONS,
): JobRunner {
  const { clock, logger } = deps;
  const db = deps.outcome.db;
  // Everything a context job does in the database goes through the live lane's client, first.
  const liveDb = deps.liveDb ?? db;
  const live = {
    pipeline: { ...deps.pipeline, db: liveDb },
    outcome: { ...deps.outcome, db: liveDb },
  };
  const workerId = deps.outcome.workerId;
  const running = new Map<number, { job: JobRecord; run: ControlledRun; done: Promise<void> }>();
  const wakers = { context: [] as (() => void)[], writeback: [] as (() => void)[] };
  // A wake-up that came while no lane of the kind was idle (it was claiming): its next idle() returns
  // at once, rather than sleeping a whole idlePollMs with a job waiting.
  const missed = { context: false, writeback: false };
  let requeuedAt = Number.NEGATIVE_INFINITY;
  let stopping = false;
  let heartbeat: unknown;
  let beating = true;

  const now = () => new Date(clock.now());

  function idle(kind: 'context' | 'writeback'): Promise<void> {
    if (missed[kind]) {
      missed[kind] = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = clock.setTimer(finish, options.idlePollMs);
      function finish() {
        clock.clearTimer(timer);
        wakers[kind] = wakers[kind].filter((w) => w !== finish);
        resolve();
      }
      wakers[kind].push(finish);
    });
  }

  /** Runs `work` on `jobs`, each with its run (lease and stop signal), tracked until it ends. */
  function track(
    jobs: JobRecord[],
    work: (runs: Map<number, ControlledRun>) => Promise<void>,
  ): Promise<void> {
    const runs = new Map(jobs.map((job) => [job.id, createJobRun({ jobId: job.id, epoch: job.epoch })]));
    const done = work(runs).catch((err: unknown) => logger.error({ err }, 'job runner: unexpected error'));
    for (const job of jobs) running.set(job.id, { job, run: runs.get(job.id)!, done });
    return done.finally(() => {
      for (const job of jobs) running.delete(job.id);
    });
  }

  async function liveLane(): Promise<void> {
    while (!stopping) {
      const free = options.liveConcurrency - countKind('context');
      const jobs = free > 0 ? await runAsLive(() => claimSafely(['context'], free, liveDb)) : [];
      if (jobs.length === 0) {
        await idle('context');
        continue;
      }
      for (const job of jobs)
        void track([job], (runs) => runAsLive(() => runContext(job, runs.get(job.id)!)));
    }
  }

  async function runContext(job: JobRecord, run: ControlledRun): Promise<void> {
    const payload = job.payload as ContextJobPayload;
    let result: TryResult;
    try {
      result = { kind: 'done', detail: await runContextJob(live.pipeline, payload, run) };
    } catch (error) {
      result = { kind: 'error', error };
    }
    await recordResult(live.outcome, job, payload.callId, result, run);
  }

  /**
   * Records a try's result, and again while the database is away: the work is done, only its
   * record is missing, and without it the job would sit claimed until its lease lapses and then
   * run again. Safe to repeat: the job updates apply only while this worker holds the job.
   */
  async function recordResult(
    outcome: OutcomeDeps,
    job: JobRecord,
    callId: string,
    result: TryResult,
    run: ControlledRun,
  ): Promise<void> {
    if (result.kind === 'error') {
      const why = stoppedBy(result.error, run);
      // The job is another run's now: nothing of this one is recorded (it would be refused).
      if (why instanceof LeaseLostError) {
        logger.warn({ jobId: job.id, callId, epoch: job.epoch }, 'job lease lost; the run stopped');
        return;
      }
      // Stopped by stop() before a side effect: back to the queue at once, the try not counted.
      if (why instanceof RunStoppedError) {
        await handBack(job);
        return;
      }
    }
    const at = clock.now();
    return retryWhileDatabaseAway(
      { clock, logger },
      'record a job result',
      () => applyTryResult(outcome, job, callId, result, at),
      { giveUp: () => stopping, context: { jobId: job.id, callId } },
    );
  }

  /** A batch's successes recorded in one go, outlasting an outage like recordResult. */
  function recordDone(done: { job: JobRecord; detail: string }[]): Promise<void> {
    const at = clock.now();
    return retryWhileDatabaseAway(
      { clock, logger },
      'record job results',
      () => applyDone(deps.outcome, done, at),
      {
        giveUp: () => stopping,
        context: { jobs: done.length },
      },
    );
  }

  async function bulkLane(): Promise<void> {
    while (!stopping) {
      const jobs = await claimSafely(['writeback'], options.bulkBatchSize);
      if (jobs.length === 0) {
        await idle('writeback');
        continue;
      }
      await track(jobs, (runs) => runBatch(jobs, runs));
    }
  }

  async function runBatch(jobs: JobRecord[], runs: Map<number, ControlledRun>): Promise<void> {
    const items = jobs.map((job) => ({
      jobId: job.id,
      payload: job.payload as WritebackJobPayload,
      priority: budgetPriorityOf(job.priority),
      run: runs.get(job.id),
    }));
    let results;
    try {
      results = await runWritebackBatch(deps.pipeline, items);
    } catch (error) {
      results = new Map(items.map((i) => [i.jobId, { kind: 'error' as const, error }]));
    }
    const done: { job: JobRecord; detail: string }[] = [];
    for (const job of jobs) {
      const payload = job.payload as WritebackJobPayload;
      const result = results.get(job.id) ?? { kind: 'error' as const, error: new Error('no result') };
      if (result.kind === 'done') done.push({ job, detail: result.detail });
      else await recordResult(deps.outcome, job, payload.callId, result, runs.get(job.id)!);
    }
    await recordDone(done);
  }

  /** Why a failed run stopped, when it was told to or its lease was fenced off; else undefined. */
  function stoppedBy(error: unknown, run: ControlledRun): Error | undefined {
    if (error instanceof LeaseLostError || error instanceof RunStoppedError) return error;
    return run.signal.aborted ? (run.signal.reason as Error) : undefined;
  }

  function handBack(job: JobRecord): Promise<boolean> {
    const at = now();
    return rescheduleJob(db, { id: job.id, epoch: job.epoch, workerId, runAt: at, now: at }).catch(
      () => false,
    );
  }

  async function claimSafely(kinds: string[], limit: number, via: Db = db): Promise<JobRecord[]> {
    try {
      // Leases run for a minute: looking for lapsed ones once per idle poll is soon enough, and
      // keeps those two statements off nearly every claim, a live call's above all.
      if (clock.now() - requeuedAt >= options.idlePollMs) {
        requeuedAt = clock.now();
        const expired = await requeueExpiredJobs(via, now());
        if (expired.failedJobs.length > 0) {
          await recordExhaustedJobs({ ...deps.outcome, db: via }, expired.failedJobs, now());
        }
      }
      return await claimJobs(via, {
        workerId,
        limit,
        leaseMs: options.leaseMs,
        now: now(),
        kinds,
        requeueExpired: false,
      });
    } catch (err) {
      logger.error({ err }, 'job runner: could not claim jobs; will try again');
      return [];
    }
  }

  function countKind(kind: string): number {
    let n = 0;
    for (const r of running.values()) if (r.job.kind === kind) n++;
    return n;
  }

  /** Renews the leases of the runs in progress; a run whose lease was taken back is told to stop. */
  async function renewLeases(): Promise<void> {
    const held = [...running.values()];
    if (held.length === 0) return;
    const renewed = new Set(
      await heartbeatJobs(db, {
        ids: held.map((r) => r.job.id),
        epochs: held.map((r) => r.job.epoch),
        workerId,
        leaseMs: options.leaseMs,
        now: now(),
      }),
    );
    for (const { job, run } of held) {
      if (renewed.has(job.id) || !running.has(job.id)) continue;
      logger.warn(
        { jobId: job.id, epoch: job.epoch },
        'job lease lost; stopping the run before its next side effect',
      );
      run.stop(new LeaseLostError(run.fence, 'the rest of the run'));
    }
  }

  function scheduleHeartbeat(): void {
    heartbeat = clock.setTimer(() => {
      renewLeases()
        .catch((err: unknown) => logger.warn({ err }, 'job runner: lease renewal failed'))
        .finally(() => {
          if (beating) scheduleHeartbeat();
        });
    }, options.leaseMs / 3);
  }

  const lanes: Promise<void>[] = [];
  return {
    start() {
      lanes.push(liveLane());
      for (let i = 0; i < options.bulkConcurrency; i++) lanes.push(bulkLane());
      scheduleHeartbeat();
    },
    wake(kinds) {
      for (const kind of ['context', 'writeback'] as const) {
        if (kinds && !kinds.has(kind)) continue;
        if (wakers[kind].length === 0) missed[kind] = true;
        for (const w of [...wakers[kind]]) w();
      }
    },
    async stop(drainMs) {
      stopping = true;
      this.wake();
      // Every run stops before its next side effect (a batch waiting for budget slots at once);
      // its job goes back as the run ends (recordResult).
      for (const { run } of running.values()) run.stop(new RunStoppedError());
      let timer: unknown;
      const timeout = new Promise<void>((resolve) => {
        timer = clock.setTimer(resolve, drainMs);
      });
      const drained = Promise.all(lanes).then(() => Promise.all([...running.values()].map((r) => r.done)));
      await Promise.race([drained, timeout]);
      clock.clearTimer(timer);
      beating = false;
      clock.clearTimer(heartbeat);
      // Past the bound: a run with no side effect in flight is handed back now; one still
      // mid-request keeps its lease until it lapses (its late writes are fenced off), so no other
      // worker starts the job while that request may still land.
      for (const { job, run } of running.values()) {
        if (run.inFlight > 0) {
          logger.warn(
            { jobId: job.id },
            'stopping: a side effect is still in flight; the job returns when its lease lapses',
          );
          continue;
        }
        await handBack(job);
      }
    },
    inFlight: () => running.size,
  };
}
