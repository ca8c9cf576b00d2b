import type { Command } from 'commander';

/**
 * `crm-sync backfill --since DATE`: walks the Service's calls from DATE and queues the write-back
 * of every call not yet synced, at the lowest budget priority. The running worker does the work;
 * the walk resumes where it stopped if interrupted (its cursor is saved per --since).
 * With --plan it only counts the calls and prints when the backfill would finish (backfillPlan.ts).
 */
export function registerBackfill(program: Command): void {
  program
    .command('backfill')
    .description('Queue every call created since DATE (ISO 8601) for sync, at the lowest priority')
    .requiredOption('--since <date>', 'first creation time to include, e.g. 2026-01-01')
    .option('--until <date>', 'last creation time to include (default now)')
    .option('--plan', 'queue nothing: count the calls and print when the backfill would finish')
    .action(async (opts: { since: string; until?: string; plan?: boolean }) => {
      const since = Date.parse(opts.since);
      const until = opts.until ? Date.parse(opts.until) : Date.now();
      if (Number.isNaN(since))
        throw new Error(`--since: expected a date like 2026-01-01, got "${opts.since}"`);
      if (Number.isNaN(until))
        throw new Error(`--until: expected a date like 2026-02-01, got "${opts.until}"`);
      const { loadConfig } = await import('../../config/config.js');
      const { openDatabaseOrWorker } = await import('../workerDb.js');
      const config = loadConfig({ require: { service: true } });
      const database = await openDatabaseOrWorker(config, { mustExist: opts.plan });
      if (!database) {
        throw new Error(
          'the embedded database is in use by the running worker; stop it for the backfill (or its --plan, which spends the same budget), or run the worker on PostgreSQL (DATABASE_URL) so both can share it',
        );
      }
      const { createRequestBudget } = await import('../../budget/index.js');
      const { createServiceClient } = await import('../../service/index.js');
      const { createDbSlotLedger } = await import('../../store/dbSlotLedger.js');
      const { migrate } = await import('../../store/migrations.js');
      const { systemClock } = await import('../../util/clock.js');
      const { discoverCalls } = await import('../../worker/discover.js');
      const { backfillRange, formatBackfillPlan, planBackfill } = await import('../backfillPlan.js');
      const cliProgress = (await import('cli-progress')).default;
      // A plan reads only: it never migrates.
      if (!opts.plan) await migrate(database);
      // The shared ledger: a backfill next to a running worker spends the same budget, not a second one.
      const ledger = createDbSlotLedger({ db: database.prisma });
      const budget = createRequestBudget({
        limits: config.service.limits,
        clock: systemClock,
        ledger,
        liveWindowReserve: config.service.liveWindowReserve,
        liveDailyReserve: config.service.liveDailyReserve,
      });
      const service = createServiceClient({
        baseUrl: config.service.baseUrl,
        apiKey: config.service.apiKey,
        budget,
      });
      try {
        if (opts.plan) {
          const plan = await planBackfill(
            {
              db: database.prisma,
              crm: config.crm,
              service,
              clock: systemClock,
              ledger,
              limits: config.service.limits,
              reserves: config.service,
            },
            { sinceMs: since, untilMs: until },
          );
          console.log(formatBackfillPlan(plan));
          return;
        }
        const span = Math.max(1, until - since);
        const bar = new cliProgress.SingleBar(
          {
            format: 'backfill [{bar}] {percentage}% | {calls} calls, {enqueued} queued | {last}',
            noTTYOutput: true,
            notTTYSchedule: 5000,
          },
          cliProgress.Presets.shades_classic,
        );
        bar.start(100, 0, { calls: 0, enqueued: 0, last: opts.since });
        try {
          const result = await discoverCalls(
            { db: database.prisma, crm: config.crm, service, clock: systemClock },
            {
              cursorName: `backfill:${new Date(since).toISOString()}`,
              reason: 'backfill',
              priority: 'backfill',
              start: backfillRange(since, until),
              onPage: (p) => {
                const at = p.lastCall ? Date.parse(p.lastCall.created_at) : since;
                bar.update(Math.min(100, Math.round(((at - since) / span) * 100)), {
                  calls: p.calls,
                  enqueued: p.enqueued,
                  last: p.lastCall?.created_at ?? '',
                });
              },
            },
          );
          bar.update(100);
          bar.stop();
          console.log(
            `Backfill walked ${result.calls} calls in ${result.pages} pages and queued ${result.enqueued} for sync. ` +
              'The worker (crm-sync start) writes them back at the lowest priority; watch with `crm-sync status`.',
          );
        } finally {
          bar.stop();
        }
      } finally {
        await service.close();
        await budget.close();
        await database.close();
      }
    });
}
