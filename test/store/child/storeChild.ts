/**
 * A second (third...) process for the multi-process store tests: `node --import tsx storeChild.ts
 * <mode> <json options>`. It talks over stdio: one JSON object per stdout line, and it waits for
 * a "go" line on stdin where the test needs several processes to start together.
 */
import { createInterface } from 'node:readline';
import { createDbSlotLedger } from '../../../src/store/dbSlotLedger.js';
import { openDatabase, type Database } from '../../../src/store/database.js';
import { claimJobs, completeJob } from '../../../src/store/jobQueue.js';
import { tryAcquireLease } from '../../../src/store/leaderLease.js';

interface Options {
  databaseUrl?: string;
  dataDir: string;
  workerId: string;
  batch?: number;
  leaseMs?: number;
  ttlMs?: number;
  renewMs?: number;
  nowMs?: number;
  acquires?: number;
}

const [mode, json] = process.argv.slice(2);
const options = JSON.parse(json ?? '{}') as Options;
const lines = createInterface({ input: process.stdin });
const stdinLines = lines[Symbol.asyncIterator]();

function say(message: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

async function waitForGo(): Promise<void> {
  say({ ready: true });
  await stdinLines.next();
}

/** Claims and completes jobs until none is left; prints each batch's ids. */
async function claimAll(db: Database): Promise<void> {
  await waitForGo();
  let total = 0;
  for (;;) {
    const jobs = await claimJobs(db.prisma, {
      workerId: options.workerId,
      limit: options.batch ?? 10,
      leaseMs: options.leaseMs ?? 60_000,
      now: new Date(),
    });
    if (jobs.length === 0) break;
    say({ claimed: jobs.map((j) => j.id) });
    for (const job of jobs) {
      const ok = await completeJob(db.prisma, { id: job.id, workerId: options.workerId, now: new Date() });
      if (!ok) say({ lost: job.id });
    }
    total += jobs.length;
  }
  say({ done: total });
}

/** Claims one batch under a lease and then hangs, holding it, until killed. */
async function claimAndHang(db: Database): Promise<never> {
  const now = new Date();
  const jobs = await claimJobs(db.prisma, {
    workerId: options.workerId,
    limit: options.batch ?? 10,
    leaseMs: options.leaseMs ?? 60_000,
    now,
  });
  say({ claimed: jobs.map((j) => j.id), atMs: now.getTime() });
  return new Promise<never>(() => setInterval(() => undefined, 60_000));
}

/** Tries to lead every `renewMs`; says when it becomes leader or loses it. */
async function lead(db: Database): Promise<never> {
  let leading = false;
  const tick = async () => {
    const { leader } = await tryAcquireLease(db.prisma, {
      name: 'test-leader',
      holder: options.workerId,
      ttlMs: options.ttlMs ?? 30_000,
    });
    if (leader !== leading) say({ leader, atMs: Date.now() });
    leading = leader;
  };
  await tick();
  say({ ready: true, leader: leading });
  return new Promise<never>(() =>
    setInterval(() => {
      tick().catch((err: unknown) => say({ error: (err as Error).message }));
    }, options.renewMs ?? 200),
  );
}

/** Acquires slots at one shared instant; prints how many were granted. */
async function acquireSlots(db: Database): Promise<void> {
  const ledger = createDbSlotLedger({ db: db.prisma, ledger: 'multi' });
  await waitForGo();
  let granted = 0;
  for (let i = 0; i < (options.acquires ?? 10); i++) {
    const grant = await ledger.acquire({
      nowMs: options.nowMs ?? Date.now(),
      priority: 'live',
      limits: { burstPerSecond: 10, ratePerMinute: 100, dailyCap: null },
      windowReserve: 0,
      dailyReserve: 0,
    });
    if (grant.granted) granted++;
  }
  say({ granted });
}

async function main(): Promise<void> {
  let db: Database;
  try {
    db = await openDatabase({ databaseUrl: options.databaseUrl, dataDir: options.dataDir });
  } catch (err) {
    say({ openError: (err as Error).message });
    process.exit(3);
  }
  if (mode === 'claim-all') await claimAll(db);
  else if (mode === 'claim-and-hang') await claimAndHang(db);
  else if (mode === 'lead') await lead(db);
  else if (mode === 'acquire') await acquireSlots(db);
  else if (mode === 'hold-open') {
    say({ opened: true, pid: process.pid });
    await new Promise<never>(() => setInterval(() => undefined, 60_000));
  } else throw new Error(`unknown mode ${mode}`);
  await db.close();
  lines.close();
}

main().catch((err: unknown) => {
  say({ error: (err as Error).stack ?? String(err) });
  process.exit(1);
});
