/**
 * One benchmark scenario on its own, for a profiler: the unlimited end-to-end backfill or the
 * webhook-ack load, on one database. Run it under `node --cpu-prof` (docs/performance.md):
 *
 *   node --cpu-prof --cpu-prof-dir=prof --import tsx bench/profile.ts throughput --db pg --calls 200
 *   node --cpu-prof --cpu-prof-dir=prof --import tsx bench/profile.ts acks --db embedded --seconds 3
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { embeddedDatabase, scratchPostgres, type BenchDatabase } from './worker/databases.js';
import { benchLogger, PLANS } from './worker/harness.js';
import { benchBackfillThroughput } from './worker/throughput.js';
import { benchDbAcks } from './worker/webhookAcks.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    db: { type: 'string', default: 'embedded' },
    calls: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '16' },
    verbose: { type: 'boolean', default: false },
    /** PostgreSQL only: count the statements the worker sends, by their first words. */
    'count-queries': { type: 'boolean', default: false },
  },
});

const statements = new Map<string, number>();
if (values['count-queries']) {
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const q = args[0] as string | { text?: string };
    const text = (typeof q === 'string' ? q : (q?.text ?? '')).replace(/\s+/g, ' ').trim().slice(0, 70);
    statements.set(text, (statements.get(text) ?? 0) + 1);
    return query.apply(this, args);
  } as typeof pg.Client.prototype.query;
}

function printStatements(perItem: number, unit: string): void {
  if (statements.size === 0) return;
  const total = [...statements.values()].reduce((a, b) => a + b, 0);
  console.log(`${total} statements, ${(total / perItem).toFixed(2)} per ${unit}:`);
  for (const [text, n] of [...statements].sort((a, b) => b[1] - a[1]).slice(0, 45))
    console.log(`  ${(n / perItem).toFixed(2).padStart(6)}  ${text}`);
}

async function database(): Promise<BenchDatabase> {
  if (values.db !== 'pg') return embeddedDatabase();
  const pg = await scratchPostgres();
  if ('skipped' in pg) throw new Error(pg.skipped);
  return pg;
}

async function main(): Promise<void> {
  const scenario = positionals[0] ?? 'throughput';
  const db = await database();
  try {
    if (scenario === 'throughput') {
      const calls = Number(values.calls);
      const r = await benchBackfillThroughput(PLANS.none, calls, {
        logger: benchLogger(values.verbose),
        timeoutMs: 600_000,
        databaseUrl: db.databaseUrl,
      });
      const perSecond = r.written / r.seconds;
      console.log(
        `${db.name}: ${r.written}/${calls} written in ${r.seconds.toFixed(1)} s = ${perSecond.toFixed(1)} calls/s from start, ${r.steadyCallsPerSecond.toFixed(1)}/s steady`,
      );
      console.log(
        `Service ${r.requestsPerCall.toFixed(2)} req/call; HubSpot ${(r.crmRequests / Math.max(1, r.written)).toFixed(2)} req/call: ${JSON.stringify(r.crmByPath)}`,
      );
      printStatements(r.written, 'call');
    } else if (scenario === 'acks') {
      const levels = values.concurrency.split(',').map(Number);
      for (const r of await benchDbAcks(db, { seconds: Number(values.seconds), concurrency: levels })) {
        printStatements(r.acks, 'ack (warm-up included)');
        console.log(
          `${db.name} ${r.concurrency} concurrent: ${Math.round(r.acksPerSecond)}/s, p50 ${r.p50Ms.toFixed(1)} ms, p99 ${r.p99Ms.toFixed(1)} ms, ${r.failures} failures, ${r.cpuMsPerAck.toFixed(2)} ms CPU/ack`,
        );
      }
    } else throw new Error(`unknown scenario ${scenario} (throughput or acks)`);
  } finally {
    await db.drop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
