/**
 * The soak (issue 24, item 7): the compiled worker (`crm-sync start` as a child process) under a
 * steady call flow for `minutes`: every `stepMs` one call starts at the Service sandbox and the
 * previous one completes, so each call goes through call.started (context push), call.completed
 * and analysis.ready (write-back) on the worker. Its RSS (from /proc) and V8 heap (its /metrics)
 * are sampled every `sampleMs`; the figure is the RSS slope of a least-squares line through the
 * samples of the last `fitMinutes` (start-up and warm-up left out).
 */
import { matchingParticipant, PLANS, startSandboxes, workerEnv } from './harness.js';
import type { BenchDatabase } from './databases.js';
import { median, metric, startChild, vmRssBytes } from './memory.js';
import { slopePerHour, type TimedValue } from './stats.js';
import { completeCall, createCall } from '../../test/e2e/harness.js';

export interface SoakSample {
  minute: number;
  rssMb: number;
  heapUsedMb: number;
  /** Calls started so far, and those the worker wrote back. */
  started: number;
  writtenBack: number;
}

export interface SoakResult {
  database: BenchDatabase['name'];
  samples: SoakSample[];
  /** RSS slope over the last `fitMinutes`, MB per hour. */
  rssSlopeMbPerHour: number;
  heapSlopeMbPerHour: number;
  fitMinutes: number;
  /** Sandbox requests of the flow that failed (a call not started or completed). */
  errors: number;
}

export interface SoakOptions {
  minutes: number;
  fitMinutes: number;
  stepMs?: number;
  sampleMs?: number;
  entry: string;
  /** Called with each sample as it is taken (progress on stderr, a file). */
  onSample?: (sample: SoakSample) => void;
  /**
   * When set, the worker writes a heap snapshot into this directory at the end, after the last
   * sample (diagnostics: compare with one taken by `kill -USR2 <pid>` earlier in the run).
   */
  snapshotDir?: string | undefined;
  /** How often RSS and heap are read; each sample is the median of its readings. */
  readMs?: number;
}

const MB = 1024 * 1024;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runSoak(target: BenchDatabase, options: SoakOptions): Promise<SoakResult> {
  const stepMs = options.stepMs ?? 2_000;
  const sampleMs = options.sampleMs ?? 60_000;
  // The team plan: 30 calls a minute fit in its 120 requests a minute, so nothing queues up and
  // what grows is the worker, not a backlog.
  const plan = PLANS.team;
  const sb = await startSandboxes(plan);
  const env = {
    ...workerEnv(sb, plan, { dataDir: target.dataDir, databaseUrl: target.databaseUrl }),
    ...(options.snapshotDir && {
      NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${options.snapshotDir}`,
    }),
  };
  const { child, url } = await startChild(env, options.entry);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  sb.svc.state.settings.webhookUrl = `${url}/webhooks`;
  const samples: SoakSample[] = [];
  const ids: string[] = [];
  let errors = 0;
  const started = Date.now();
  const end = started + options.minutes * 60_000;
  // RSS and heap swing by 100 MB and more between collections under this flow: each minute's
  // figure is the median of a reading every `readMs`, not one reading.
  let minuteRss: number[] = [];
  let minuteHeap: number[] = [];
  const read = async () => {
    const text = await (await fetch(`${url}/metrics`)).text();
    minuteRss.push(vmRssBytes(child.pid) ?? metric(text, 'process_resident_memory_bytes') ?? Number.NaN);
    minuteHeap.push(metric(text, 'nodejs_heap_size_used_bytes') ?? Number.NaN);
  };
  const take = async () => {
    if (minuteRss.length === 0) await read();
    const status = (await (await fetch(`${url}/status`)).json()) as { calls: Record<string, number> };
    const sample: SoakSample = {
      minute: Math.round((Date.now() - started) / 6_000) / 10,
      rssMb: median(minuteRss) / MB,
      heapUsedMb: median(minuteHeap) / MB,
      started: ids.length,
      writtenBack: status.calls.written_back ?? 0,
    };
    minuteRss = [];
    minuteHeap = [];
    samples.push(sample);
    options.onSample?.(sample);
  };
  const reader = setInterval(() => void read().catch(() => undefined), options.readMs ?? 5_000);
  try {
    await take();
    let nextSample = started + sampleMs;
    for (let i = 0; Date.now() < end; i++) {
      const stepAt = started + (i + 1) * stepMs;
      try {
        ids.push(await createCall(sb.svc, matchingParticipant(i)));
        const previous = ids.at(-2);
        if (previous) await completeCall(sb.svc, previous);
      } catch {
        errors++;
      }
      if (Date.now() >= nextSample) {
        await take();
        nextSample += sampleMs;
      }
      await sleep(Math.max(0, stepAt - Date.now()));
    }
    const last = ids.at(-1);
    if (last) await completeCall(sb.svc, last).catch(() => errors++);
    await take();
    clearInterval(reader);
    // After the last sample, so that writing it does not count: heap snapshots to compare.
    if (options.snapshotDir) child.kill('SIGUSR2');
    const fitFrom = samples.at(-1)!.minute - options.fitMinutes;
    const fit = samples.filter((s) => s.minute >= fitFrom);
    const line = (pick: (s: SoakSample) => number): TimedValue[] =>
      fit.map((s) => ({ hours: s.minute / 60, value: pick(s) }));
    return {
      database: target.name,
      samples,
      rssSlopeMbPerHour: slopePerHour(line((s) => s.rssMb)),
      heapSlopeMbPerHour: slopePerHour(line((s) => s.heapUsedMb)),
      fitMinutes: options.fitMinutes,
      errors,
    };
  } finally {
    clearInterval(reader);
    sb.svc.state.settings.webhookUrl = undefined;
    child.kill('SIGTERM');
    await exited;
    await sb.close();
  }
}
