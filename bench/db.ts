/**
 * Database benchmark: job queue throughput (enqueue, then claim + complete, by one worker and by
 * four concurrent workers) and the latency DbSlotLedger.acquire adds per Service request over the
 * in-memory ledger, on the embedded PGlite and on PostgreSQL.
 *
 *   npm run bench:db -- [--jobs 2000] [--acquires 2000] [--step-ms 100]
 *
 * Acquires are `--step-ms` apart on a fake clock (100 ms = a 600/min plan at full use), so the
 * ledger's windows hold what a busy plan would.
 *
 * PostgreSQL: DATABASE_URL or TEST_DATABASE_URL, else postgresql://postgres@127.0.0.1:5432/test if
 * it answers. A scratch database (crm_sync_bench_<random>) is created there and dropped after.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { InMemorySlotLedger } from '../src/budget/ledger.js';
import type { SlotLedger, SlotRequest } from '../src/budget/types.js';
import { openDatabase, type Database } from '../src/store/database.js';
import { embeddedDatabase, scratchPostgres, type BenchDatabase } from './worker/databases.js';
import { createDbSlotLedger } from '../src/store/dbSlotLedger.js';
import { enqueueJob } from '../src/store/jobEnqueue.js';
import { claimJobs, completeJob } from '../src/store/jobQueue.js';
import { migrate } from '../src/store/migrations.js';
import { formatTable } from '../src/util/table.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '2000' },
    acquires: { type: 'string', default: '2000' },
    'step-ms': { type: 'string', default: '100' },
  },
});
const JOBS = Number(values.jobs);
const ACQUIRES = Number(values.acquires);
const STEP_MS = Number(values['step-ms']);
/** Enqueues JOBS jobs one statement each; returns jobs per second. */
async function enqueueRate(db: Database, kind: string): Promise<number> {
  const now = new Date(Date.now() - 1_000);
  const started = performance.now();
  for (let i = 0; i < JOBS; i++) {
    await enqueueJob(db.prisma, {
      kind,
      key: `${kind}:${i}`,
      payload: { callId: `call_${i}` },
      priority: i % 3,
      now,
    });
  }
  return JOBS / ((performance.now() - started) / 1000);
}

/** `workers` concurrent loops claim (batches of 10) and complete until the kind is drained. */
async function drainRate(db: Database, kind: string, workers: number): Promise<number> {
  const started = performance.now();
  let done = 0;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (;;) {
        const now = new Date();
        const jobs = await claimJobs(db.prisma, {
          workerId: `bench-${w}`,
          limit: 10,
          leaseMs: 60_000,
          now,
          kinds: [kind],
        });
        if (jobs.length === 0) return;
        for (const job of jobs) {
          if (await completeJob(db.prisma, { id: job.id, workerId: `bench-${w}`, now })) done++;
        }
      }
    }),
  );
  if (done !== JOBS) throw new Error(`drained ${done} of ${JOBS} jobs`);
  return JOBS / ((performance.now() - started) / 1000);
}

/** Mean and 95th percentile of one acquire, in ms, with limits that always grant. */
async function acquireLatency(ledger: SlotLedger): Promise<{ mean: number; p95: number }> {
  const start = Date.UTC(2026, 0, 1, 12);
  const times: number[] = [];
  for (let i = 0; i < ACQUIRES; i++) {
    const request: SlotRequest = {
      nowMs: start + i * STEP_MS,
      priority: 'writeback',
      limits: { burstPerSecond: 1e6, ratePerMinute: 1e6, dailyCap: null },
      windowReserve: 0,
      dailyReserve: 0,
    };
    const t = performance.now();
    const grant = await ledger.acquire(request);
    times.push(performance.now() - t);
    if (!grant.granted) throw new Error('benchmark acquire was refused');
  }
  times.sort((a, b) => a - b);
  return {
    mean: times.reduce((a, b) => a + b, 0) / times.length,
    p95: times[Math.floor(times.length * 0.95)]!,
  };
}

const fmt = (n: number, digits = 0) => n.toFixed(digits);
const label = (t: BenchDatabase) => (t.name === 'embedded' ? 'embedded (PGlite)' : t.name);

async function main(): Promise<void> {
  const pgTarget = await scratchPostgres();
  if ('skipped' in pgTarget) console.warn(`PostgreSQL skipped: ${pgTarget.skipped}`);
  const targets: BenchDatabase[] = [embeddedDatabase(), ...('skipped' in pgTarget ? [] : [pgTarget])];
  const jobRows: (string | number)[][] = [];
  const ledgerRows: (string | number)[][] = [];
  const memory = await acquireLatency(new InMemorySlotLedger());
  ledgerRows.push(['in-memory', fmt(memory.mean, 3), fmt(memory.p95, 3), '-']);

  for (const target of targets) {
    const db = await openDatabase({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
    try {
      await migrate(db);
      const enqueue = await enqueueRate(db, 'one');
      const one = await drainRate(db, 'one', 1);
      await enqueueRate(db, 'four');
      const four = await drainRate(db, 'four', 4);
      jobRows.push([label(target), fmt(enqueue), fmt(one), fmt(four)]);

      const dbLedger = await acquireLatency(createDbSlotLedger({ db: db.prisma, ledger: 'bench' }));
      ledgerRows.push([
        label(target),
        fmt(dbLedger.mean, 3),
        fmt(dbLedger.p95, 3),
        fmt(dbLedger.mean - memory.mean, 3),
      ]);
    } finally {
      await db.close();
      await target.drop();
    }
  }

  console.log(`\nJob queue, ${JOBS} jobs (jobs per second)\n`);
  console.log(
    formatTable(['database', 'enqueue', 'claim+complete, 1 worker', 'claim+complete, 4 workers'], jobRows),
  );
  console.log(`\nSlot ledger, ${ACQUIRES} acquires (ms per acquire)\n`);
  console.log(formatTable(['ledger', 'mean', 'p95', 'added vs in-memory'], ledgerRows));
}

await main();
