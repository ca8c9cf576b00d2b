/**
 * The worker's memory while many calls wait: `jobs` write-back jobs are queued directly (as a
 * backfill would queue them, lowest priority, each carrying its call) for calls the Service sandbox
 * holds, then the real binary (`crm-sync start`) starts as a child process on the
 * `sales` plan, so the calls wait on the budget. Its RSS is sampled (from /proc on Linux, else its
 * /metrics), its heap read from /metrics, and on Linux its peak RSS from /proc (VmHWM) at the end.
 * Run the compiled worker (`entry`, see compiled.ts) for the figures a deployment sees.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rawConfigSchema } from '../../src/config/schema.js';
import { JOB_PRIORITY, writebackJobKey } from '../../src/store/jobKinds.js';
import { inTransaction, openDatabase } from '../../src/store/database.js';
import { enqueueJob } from '../../src/store/jobEnqueue.js';
import { migrate } from '../../src/store/migrations.js';
import type { BenchDatabase } from './databases.js';
import { PLANS, REPO_ROOT, startSandboxes, workerEnv, type Env, type Sandboxes } from './harness.js';

export interface MemorySample {
  /** RSS once start-up has settled: the median of the second half of the samples. */
  settledRssMb: number;
  /** Heap used at the same point. */
  settledHeapUsedMb: number;
  /** The kernel's high-water mark of the child's RSS (null off Linux). */
  vmHwmMb: number | null;
  samples: number;
  /** RSS 20 s after the process was spawned, as an operator reads it from /proc (null off Linux). */
  rssAt20sMb: number | null;
  /** Jobs still queued when sampling ended. */
  waitingAtEnd: number;
}

export interface MemoryResult {
  database: BenchDatabase['name'];
  jobs: number;
  /** The first start on a fresh database (the embedded one runs initdb in it). */
  firstStart: MemorySample;
  /** A second start on the same database, nothing queued: the idle figure. */
  idle: MemorySample;
  /**
   * A third start with BUSY_JOBS write-backs queued: the worker at work (SDKs loaded, requests
   * in flight) but with a short queue, the baseline the queue's own cost is measured against.
   */
  busy: MemorySample;
  /** A fourth start with `jobs` write-backs queued, waiting on the `sales` budget. */
  queued: MemorySample;
}

const MB = 1024 * 1024;
/** When an operator reads the worker's RSS after `crm-sync start` (issue 24). */
const AT_SECONDS = 20;
/** The short queue of the `busy` start. */
export const BUSY_JOBS = 50;

async function queueWriteBacks(
  sb: Sandboxes,
  target: BenchDatabase,
  from: number,
  to: number,
): Promise<void> {
  const database = await openDatabase({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
  try {
    await migrate(database);
    const calls = sb.svc.state.calls().slice(from, to);
    const now = new Date();
    for (let i = 0; i < calls.length; i += 500) {
      await inTransaction(database.prisma, async (tx) => {
        for (const record of calls.slice(i, i + 500)) {
          const call = sb.svc.state.callJson(record.id);
          await enqueueJob(tx, {
            kind: 'writeback',
            key: writebackJobKey(record.id),
            payload: { callId: record.id, reason: 'backfill', call },
            priority: JOB_PRIORITY.backfill,
            now,
          });
        }
      });
    }
  } finally {
    await database.close();
  }
}

/** The environment of this process without any crm-sync setting, plus `env`. */
function childEnv(env: Env): NodeJS.ProcessEnv {
  const known = new Set(Object.keys(rawConfigSchema.shape));
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !known.has(k)));
  return { ...base, ...env };
}

/** `entry`: compiled CLI (compiled.ts) to run with plain node; default the source through tsx. */
export function startChild(env: Env, entry?: string): Promise<{ child: ChildProcess; url: string }> {
  const args = entry ? [entry] : ['--import', 'tsx', 'src/cli/main.ts'];
  const child = spawn(process.execPath, [...args, 'start', '--drain-seconds', '2'], {
    cwd: REPO_ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve({ child, url: match[1]! });
    });
    child.once('exit', (code) => reject(new Error(`worker exited with ${code} before listening: ${out}`)));
  });
}

export function metric(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

export function vmHwmMb(pid: number | undefined): number | null {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? null : Number(kb) / 1024;
  } catch {
    return null;
  }
}

export function median(values: number[]): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/**
 * The worker's RSS as the kernel counts it (VmRSS), read from outside so that sampling does not
 * disturb an idle process; null where there is no /proc.
 */
export function vmRssBytes(pid: number | undefined): number | null {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? null : Number(kb) * 1024;
  } catch {
    return null;
  }
}

/**
 * Starts the worker, samples its RSS every 500 ms for `seconds` (and reads it once 20 s after the
 * spawn, waiting for that if `seconds` is shorter), stops it. On Linux the RSS comes
 * from /proc and the worker's /metrics is read once, at the end (a scrape every 500 ms keeps an
 * idle worker busy building the exposition: PostgreSQL idle read 129 MB that way and 122 MB from
 * /proc, a few minutes apart); elsewhere from /metrics.
 */
async function sampleWorker(env: Env, seconds: number, entry: string | undefined): Promise<MemorySample> {
  const spawnedAt = Date.now();
  const { child, url } = await startChild(env, entry);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const rss: number[] = [];
    const heap: number[] = [];
    const scrape = async () => {
      const text = await (await fetch(`${url}/metrics`)).text();
      heap.push(metric(text, 'nodejs_heap_size_used_bytes') ?? Number.NaN);
      return metric(text, 'process_resident_memory_bytes') ?? Number.NaN;
    };
    const end = Date.now() + seconds * 1000;
    let at20s: number | null = null;
    while (Date.now() < end || (at20s === null && Date.now() < spawnedAt + 25_000)) {
      const reading = vmRssBytes(child.pid);
      if (at20s === null && Date.now() - spawnedAt >= AT_SECONDS * 1000) at20s = reading ?? Number.NaN;
      if (Date.now() < end) rss.push(reading ?? (await scrape()));
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    if (heap.length === 0) await scrape();
    const status = (await (await fetch(`${url}/status`)).json()) as {
      jobs: { byState: Record<string, number> };
    };
    const half = Math.floor(rss.length / 2);
    return {
      settledRssMb: median(rss.slice(half)) / MB,
      settledHeapUsedMb: median(heap.slice(Math.floor(heap.length / 2))) / MB,
      vmHwmMb: vmHwmMb(child.pid),
      samples: rss.length,
      rssAt20sMb: at20s === null || Number.isNaN(at20s) ? null : at20s / MB,
      waitingAtEnd: status.jobs.byState.queued ?? 0,
    };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

/**
 * Four starts of the worker on one database: fresh, again idle, with a short queue and with
 * `jobs` write-backs queued. The difference between the last two is what the queue costs (the
 * idle worker has not loaded the CRM SDK nor made a request, so it is not the baseline).
 */
export async function benchWorkerMemory(
  target: BenchDatabase,
  options: { jobs: number; seconds: number; entry?: string | undefined },
): Promise<MemoryResult> {
  const plan = PLANS.sales;
  const sb = await startSandboxes(plan, { seedCalls: options.jobs });
  try {
    const env = {
      ...workerEnv(sb, plan, { dataDir: target.dataDir, databaseUrl: target.databaseUrl }),
      // No poll: the sandbox's seeded calls would otherwise give an idle worker work to do.
      POLL_SCHEDULE: '0 0 0 1 1 *',
    };
    const firstStart = await sampleWorker(env, options.seconds, options.entry);
    const idle = await sampleWorker(env, options.seconds, options.entry);
    await queueWriteBacks(sb, target, 0, BUSY_JOBS);
    const busy = await sampleWorker(env, options.seconds, options.entry);
    await queueWriteBacks(sb, target, BUSY_JOBS, options.jobs);
    const queued = await sampleWorker(env, options.seconds, options.entry);
    return { database: target.name, jobs: options.jobs, firstStart, idle, busy, queued };
  } finally {
    await sb.close();
  }
}
