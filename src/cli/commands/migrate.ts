import type { Command } from 'commander';
import type { Database } from '../../store/database.js';

interface MigrateOptions {
  status?: boolean;
  rolledBack?: string;
}

/** `crm-sync migrate`: applies the database migrations, shows their status, or resolves a failed one. */
export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('Create or update the database tables (PostgreSQL from DATABASE_URL, else the embedded one)')
    .option(
      '--status',
      'only show which migrations are applied, pending, failed or changed (creates nothing)',
    )
    .option(
      '--rolled-back <migration>',
      'mark a failed migration as rolled back (after undoing what it did), so the next run retries it',
    )
    .action(async (opts: MigrateOptions) => {
      const { loadConfig } = await import('../../config/config.js');
      const { createLogger } = await import('../../log/logger.js');
      const { openDatabase } = await import('../../store/database.js');
      const config = loadConfig();
      const logger = createLogger({ level: config.logLevel });
      // --status only reads: it never creates an embedded database where there is none.
      const db = await openDatabase({
        databaseUrl: config.databaseUrl,
        dataDir: config.dataDir,
        logger,
        existing: opts.status === true && !config.databaseUrl,
      });
      try {
        const where = `${db.kind === 'postgres' ? 'PostgreSQL database' : 'embedded database'} at ${db.location}`;
        await runMigrate(db, where, opts);
      } finally {
        await db.close();
      }
    });
}

async function runMigrate(db: Database, where: string, opts: MigrateOptions): Promise<void> {
  const { markMigrationRolledBack, migrate, migrationStatus } = await import('../../store/migrations.js');
  if (opts.rolledBack) {
    await markMigrationRolledBack(db, opts.rolledBack);
    console.log(
      `Marked ${opts.rolledBack} as rolled back on the ${where}; run \`crm-sync migrate\` to apply it again.`,
    );
    return;
  }
  if (opts.status) {
    const status = await migrationStatus(db);
    console.log(`Migrations on the ${where}:`);
    console.log(`  applied: ${status.applied.length === 0 ? 'none' : `${status.applied.length}`}`);
    for (const name of status.applied) console.log(`    ${name}`);
    console.log(`  pending: ${status.pending.join(', ') || 'none'}`);
    if (status.failed.length > 0) console.log(`  FAILED: ${status.failed.join(', ')}`);
    if (status.edited.length > 0) console.log(`  changed after being applied: ${status.edited.join(', ')}`);
    if (status.unknown.length > 0) console.log(`  applied by a newer crm-sync: ${status.unknown.join(', ')}`);
    if (status.failed.length > 0) process.exitCode = 1;
    return;
  }
  try {
    const applied = await migrate(db);
    if (applied.length === 0) console.log(`The ${where} is up to date; no migration to apply.`);
    else
      console.log(
        `Applied ${applied.length} migration(s) to the ${where}:\n${applied.map((n) => `  ${n}`).join('\n')}`,
      );
  } catch (err) {
    const failed = (await migrationStatus(db).catch(() => null))?.failed ?? [];
    const hint =
      failed.length > 0
        ? `\nFailed: ${failed.join(', ')}. Undo what it did, then run \`crm-sync migrate --rolled-back ${failed[0]}\` and \`crm-sync migrate\` again.`
        : '';
    throw new Error(`migration failed on the ${where}: ${firstLine(err)}${hint}`, { cause: err });
  }
}

function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n').slice(0, 2).join(' ').trim();
}
