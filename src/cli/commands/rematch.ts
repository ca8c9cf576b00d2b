import type { Command } from 'commander';

/**
 * `crm-sync rematch --since DATE [--dry-run]`: runs the match rules again for the calls written
 * since DATE and moves each activity whose contact, company or deal changed (after a deal rule or
 * CRM data change), recording the move in the call's history. Safe to run again: a second run
 * finds nothing to move and writes nothing to the CRM.
 */
export function registerRematch(program: Command): void {
  program
    .command('rematch')
    .description(
      'Match the calls written since DATE again and move their activities to the records the rules now choose',
    )
    .requiredOption('--since <date>', 'first call time to include (ISO 8601), e.g. 2026-01-01')
    .option('--dry-run', 'print what would move; write nothing to the CRM or the database')
    .option('--json', 'print the summary as JSON')
    .action(async (opts: { since: string; dryRun?: boolean; json?: boolean }) => {
      const since = Date.parse(opts.since);
      if (Number.isNaN(since))
        throw new Error(`--since: expected a date like 2026-01-01, got "${opts.since}"`);
      const { loadConfig } = await import('../../config/config.js');
      const { openDatabaseOrWorker } = await import('../workerDb.js');
      const config = loadConfig({ require: { crm: true } });
      const database = await openDatabaseOrWorker(config, { mustExist: opts.dryRun });
      if (!database) {
        throw new Error(
          'the embedded database is in use by the running worker; stop it for the rematch, or run the worker on PostgreSQL (DATABASE_URL) so both can share it',
        );
      }
      const { loadMappings } = await import('../../mapping/index.js');
      const { createCrmAdapter } = await import('../../crm/factory.js');
      const { migrate } = await import('../../store/migrations.js');
      const { systemClock } = await import('../../util/clock.js');
      const { runRematch } = await import('../../pipelines/rematch.js');
      const { formatRematch, formatRematchProgress } = await import('../rematchFormat.js');
      const { crmLedgerFor } = await import('../../store/crmSlotLedger.js');
      const cleanup: (() => Promise<unknown>)[] = [];
      try {
        // A dry run reads only: it never migrates.
        if (!opts.dryRun) await migrate(database);
        const mapping = loadMappings(config.configDir, config.crm);
        // On PostgreSQL its requests count in the workers' CRM budget.
        const ledger = crmLedgerFor(database, config.crm, systemClock, cleanup);
        const { refreshTokensFor } = await import('../../store/crmCredentialStore.js');
        const refreshTokens = refreshTokensFor(config, database.prisma);
        const crm = await createCrmAdapter(config, { mapping, ledger, refreshTokens });
        const summary = await runRematch(
          { db: database.prisma, crmName: config.crm, crm, mapping, clock: systemClock },
          {
            since: new Date(since),
            dryRun: opts.dryRun,
            onProgress: (p) => console.error(formatRematchProgress(p, opts.dryRun)),
          },
        );
        console.log(opts.json ? JSON.stringify(summary, null, 2) : formatRematch(summary));
        if (summary.failed > 0 || summary.stoppedBy !== undefined) process.exitCode = 1;
      } finally {
        for (const close of cleanup) await close().catch(() => undefined);
        await database.close();
      }
    });
}
