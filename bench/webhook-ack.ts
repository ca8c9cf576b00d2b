/**
 * Webhook ack latency: a real listening server, N concurrent signed deliveries over keep-alive
 * connections for a few seconds, each counted from send until the 2xx is read. The numbers include
 * client overhead; the generator runs in a child process so it does not share the server's
 * event loop.
 *
 *   npx tsx bench/webhook-ack.ts [--seconds 3] [--concurrency 1,16,64]
 *
 * Pass `inbox` to measure a database-backed inbox instead of the in-memory one.
 */
import type { AddressInfo } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fork } from 'node:child_process';
import { parseArgs } from 'node:util';
import { silentLogger } from '../src/log/logger.js';
import { buildHttpServer } from '../src/http/server.js';
import { signWebhookBody } from '../src/http/signature.js';
import type { InboxRecord, WebhookInbox } from '../src/http/types.js';
import { createMetrics } from '../src/metrics/metrics.js';
import { formatTable } from '../src/util/table.js';
import { runClosedLoop, serializeRequest } from './httpLoad.js';

export interface WebhookAckOptions {
  seconds: number;
  concurrency: number;
  /** Defaults to an in-memory inbox that dedups by event id. */
  inbox?: WebhookInbox;
}

export interface WebhookAckResult {
  acksPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  acks: number;
  /** Answers other than 202, and transport errors. */
  failures: number;
  /**
   * CPU time of this process (receiver, inbox, embedded database; not the load generator) per
   * ack, warm-up included: steadier than the rate on a busy machine.
   */
  cpuMsPerAck: number;
}

const SECRET = 'whsec_bench_current';
const WARMUP_MS = 300;

class MemoryInbox implements WebhookInbox {
  private readonly seen = new Set<string>();
  async store(e: InboxRecord): Promise<{ duplicate: boolean }> {
    if (e.eventId === null || !this.seen.has(e.eventId)) {
      if (e.eventId !== null) this.seen.add(e.eventId);
      return { duplicate: false };
    }
    return { duplicate: true };
  }
}

/** A call.completed event of realistic size (about 700 bytes), unique per `n`. */
function eventBody(n: number): string {
  return JSON.stringify({
    id: `evt_bench_${n}`,
    type: 'call.completed',
    created_at: new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString(),
    data: {
      call_id: `call_${n}`,
      call: {
        id: `call_${n}`,
        status: 'completed',
        created_at: '2026-01-01T12:00:00Z',
        duration_seconds: 1820,
        platform: 'zoom',
        participant: { name: 'Dana Prospect', email: `dana${n}@example.com`, company: 'Example Corp' },
        scoring: { overall: 78, rapport: 81, discovery: 70, objection_handling: 74, closing: 65 },
        objections_detected: 3,
        objections_handled: 2,
        methodology: 'MEDDIC',
        links: { self: `https://service.example/v1/calls/call_${n}` },
      },
    },
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const LOAD_ROLE = '--webhook-ack-load';

interface LoadPlan {
  port: number;
  seconds: number;
  concurrency: number;
}

interface LoadResult {
  /** Deliveries answered, warm-up included. */
  sent: number;
  latencies: Float64Array;
  failures: number;
  elapsedSeconds: number;
}

export async function benchWebhookAck(options: WebhookAckOptions): Promise<WebhookAckResult> {
  const app = buildHttpServer({
    logger: silentLogger,
    webhookSecrets: [SECRET],
    maxBodyBytes: 1_048_576,
    inbox: options.inbox ?? new MemoryInbox(),
    status: async () => ({}),
    readiness: async () => ({ ready: true, checks: {} }),
    metrics: createMetrics(),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  try {
    const plan: LoadPlan = { port, seconds: options.seconds, concurrency: options.concurrency };
    const cpu = process.cpuUsage();
    const load = await runLoadInChild(plan);
    const used = process.cpuUsage(cpu);
    const latencies = Array.from(load.latencies).sort((a, b) => a - b);
    return {
      acksPerSecond: latencies.length / load.elapsedSeconds,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      maxMs: latencies.at(-1) ?? Number.NaN,
      acks: latencies.length,
      failures: load.failures,
      cpuMsPerAck: (used.user + used.system) / 1000 / Math.max(1, load.sent),
    };
  } finally {
    await app.close();
  }
}

/**
 * The load generator runs in a child process (this same module) so that signing and sending do
 * not compete with the server for its event loop.
 */
function runLoadInChild(plan: LoadPlan): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    // tsx registers its loader in-process, so the child running this .ts file needs it again.
    const execArgv = import.meta.url.endsWith('.ts') ? ['--import', 'tsx'] : [];
    const child = fork(fileURLToPath(import.meta.url), [LOAD_ROLE], { execArgv, serialization: 'advanced' });
    child.once('message', (result) => resolve(result as LoadResult));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`load generator exited with ${code}`));
    });
    child.send(plan);
  });
}

/** Requests prepared before the clock starts, enough for this many acks per second. */
const PREPARED_PER_SECOND = 4000;

async function generateLoad(plan: LoadPlan): Promise<LoadResult> {
  const host = `127.0.0.1:${plan.port}`;
  const build = (n: number) => {
    const body = eventBody(n);
    return serializeRequest(host, {
      method: 'POST',
      path: '/webhooks',
      body,
      headers: { 'content-type': 'application/json', 'x-service-signature': signWebhookBody(body, SECRET) },
    });
  };
  // Bodies and signatures are made before the run: the Service signs on its own machines.
  const prepared = Array.from(
    { length: Math.ceil((PREPARED_PER_SECOND * (plan.seconds * 1000 + WARMUP_MS)) / 1000) },
    (_, n) => build(n),
  );
  const run = await runClosedLoop({
    port: plan.port,
    concurrency: plan.concurrency,
    warmupMs: WARMUP_MS,
    seconds: plan.seconds,
    okStatus: 202,
    request: (n) => prepared[n] ?? build(n),
  });
  return {
    sent: run.sent,
    latencies: Float64Array.from(run.latencies),
    failures: run.failures,
    elapsedSeconds: run.elapsedSeconds,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '3' },
      concurrency: { type: 'string', default: '1,16,64' },
    },
  });
  const seconds = Number(values.seconds);
  const levels = values.concurrency.split(',').map(Number);
  const rows: (string | number)[][] = [];
  for (const concurrency of levels) {
    const r = await benchWebhookAck({ seconds, concurrency });
    rows.push([
      concurrency,
      Math.round(r.acksPerSecond),
      r.p50Ms.toFixed(2),
      r.p99Ms.toFixed(2),
      r.maxMs.toFixed(2),
      r.failures,
      r.p99Ms < 50 ? 'yes' : 'NO',
    ]);
  }
  console.log(`webhook ack, in-memory inbox, ${seconds} s per row, node ${process.version}\n`);
  console.log(
    formatTable(['concurrency', 'acks/s', 'p50 ms', 'p99 ms', 'max ms', 'failures', 'p99 < 50 ms'], rows),
  );
}

if (process.argv[2] === LOAD_ROLE) {
  process.once('message', (plan: LoadPlan) => {
    void generateLoad(plan).then((result) => process.send?.(result, () => process.disconnect()));
  });
} else if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
