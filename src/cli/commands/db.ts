import type { Command } from 'commander';

/** `crm-sync db copy --to URL`: moves the current database's state into an empty PostgreSQL. */
export function registerDb(program: Command): void {
  const db = program.command('db').description('Database maintenance');
  db.command('copy')
    .description(
      'Copy everything crm-sync keeps (sync status and history, cursor, inbox, jobs, follow-ups, budget ledger) ' +
        'from the current database (DATABASE_URL, else the embedded one in DATA_DIR) into an empty PostgreSQL',
    )
    .requiredOption(
      '--to <url>',
      'the target PostgreSQL, postgres://user:password@host:5432/db (must be empty)',
    )
    .option('--batch-size <n>', 'rows per batch', '1000')
    .option(
      '--while-running',
      'copy even though a worker holds leases or runs jobs in the source (its running jobs are copied as running)',
    )
    .action(async (opts: { to: string; batchSize: string; whileRunning?: boolean }) => {
      const { loadConfig } = await import('../../config/config.js');
      const { createLogger } = await import('../../log/logger.js');
      const { openDatabase, redactUrl } = await import('../../store/database.js');
      const { copyDatabase } = await import('../../store/dbCopy.js');
      if (!/^postgres(ql)?:\/\//.test(opts.to)) {
        throw new Error('--to: expected a postgres:// or postgresql:// URL');
      }
      const batchSize = Number(opts.batchSize);
      if (!Number.isInteger(batchSize) || batchSize < 1)
        throw new Error('--batch-size: expected a whole number above 0');
      const config = loadConfig();
      if (config.databaseUrl && sameDatabase(config.databaseUrl, opts.to)) {
        throw new Error(
          '--to names the database crm-sync already uses (DATABASE_URL); give a new, empty one',
        );
      }
      const logger = createLogger({ level: config.logLevel === 'info' ? 'warn' : config.logLevel });
      // The embedded database has one owner: this fails plainly while the worker runs. A source
      // crm-sync never set up is refused before anything is created, here or at the target.
      const source = await openDatabase({
        databaseUrl: config.databaseUrl,
        dataDir: config.dataDir,
        logger,
        existing: true,
      });
      const from = source.kind === 'embedded' ? `embedded database in ${source.location}` : source.location;
      const to = redactUrl(opts.to);
      console.log(`Copying ${from} -> ${to}`);
      try {
        const result = await copyDatabase(source, opts.to, {
          batchSize,
          whileRunning: opts.whileRunning,
          logger,
          onTable: (table, rows) => console.log(`  ${table.padEnd(20)} ${rows} row(s)`),
        });
        const total = result.tables.reduce((sum, t) => sum + t.rows, 0);
        console.log(
          `Copied ${total} row(s) in ${result.tables.length} tables. Set DATABASE_URL to the new database and start the worker.`,
        );
      } finally {
        await source.close();
      }
    });
}

function sameDatabase(a: string, b: string): boolean {
  try {
    const [x, y] = [new URL(a), new URL(b)];
    return (
      x.hostname === y.hostname && (x.port || '5432') === (y.port || '5432') && x.pathname === y.pathname
    );
  } catch {
    return false;
  }
}
