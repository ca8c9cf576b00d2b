import path from 'node:path';
import type { AppConfig } from '../../config/config.js';
import { SetupError } from '../../config/setupError.js';
import type { SetupCheck } from '../../crm/types.js';
import { embeddedDir, embeddedExists, openDatabase, type Database } from '../../store/database.js';
import { EmbeddedDatabaseInUseError } from '../../store/embeddedLock.js';

/**
 * doctor's database check: reachable, migrations applied, and, when some are pending, whether the
 * role may apply them (create tables, alter the existing ones). Creates and migrates nothing.
 */
export async function checkDatabase(config: AppConfig): Promise<SetupCheck> {
  const name = 'database';
  if (!config.databaseUrl && !embeddedExists(config.dataDir)) {
    return {
      name,
      ok: true,
      detail: `embedded, none yet in ${path.resolve(embeddedDir(config.dataDir))}; crm-sync start creates it`,
      fix: 'if the worker already ran, set DATA_DIR to its data directory',
    };
  }
  let db: Database;
  try {
    db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  } catch (err) {
    if (err instanceof EmbeddedDatabaseInUseError) {
      return {
        name,
        ok: true,
        detail: `embedded in ${config.dataDir}, in use by the running worker (pid ${err.pid})`,
      };
    }
    if (err instanceof SetupError) return { name, ok: false, detail: err.problem, fix: err.fix };
    return { name, ok: false, detail: (err as Error).message.split('\n')[0]!, fix: 'check DATABASE_URL' };
  }
  try {
    const where = db.kind === 'postgres' ? `PostgreSQL ${db.location}` : `embedded in ${db.location}`;
    const { explainRefusedMigration, migrationStatus } = await import('../../store/migrations.js');
    const status = await migrationStatus(db).catch((err: unknown) => {
      const refused = explainRefusedMigration(err, db);
      return refused instanceof SetupError ? refused : Promise.reject(err);
    });
    if (status instanceof SetupError) return { name, ok: false, detail: status.problem, fix: status.fix };
    if (status.failed.length > 0) {
      return {
        name,
        ok: false,
        detail: `${where}: migration ${status.failed.join(', ')} failed`,
        fix: `undo what it did, then run "crm-sync migrate --rolled-back ${status.failed[0]}" and "crm-sync migrate"`,
      };
    }
    if (status.pending.length === 0) return { name, ok: true, detail: `${where}, migrations applied` };
    const pending = `${status.pending.length} migration(s) pending`;
    const refused = db.kind === 'postgres' ? await missingRights(db) : null;
    if (refused) {
      return {
        name,
        ok: false,
        detail: `${where}: ${pending}, which the role cannot apply (${refused})`,
        fix: 'grant the role CREATE on schema public and ownership of the crm-sync tables, or run "crm-sync migrate" once as their owner',
      };
    }
    return { name, ok: true, detail: `${where}: ${pending}; crm-sync start (or migrate) applies them` };
  } finally {
    await db.close();
  }
}

/** Why the connected role could not apply migrations (create tables, alter crm-sync's), or null. */
async function missingRights(db: Database): Promise<string | null> {
  const [row] = await db.prisma.$queryRaw<{ role: string; can_create: boolean; not_owned: number }[]>`
    SELECT current_user::text AS role,
           has_schema_privilege('public', 'CREATE') AS can_create,
           (SELECT count(*)::int FROM pg_tables
             WHERE schemaname = 'public' AND NOT pg_has_role(current_user, tableowner, 'USAGE')) AS not_owned`;
  if (!row) return null;
  const reasons: string[] = [];
  if (!row.can_create) reasons.push(`role ${row.role} may not create tables in schema public`);
  if (row.not_owned > 0)
    reasons.push(`role ${row.role} does not own ${row.not_owned} table(s) it must alter`);
  return reasons.length > 0 ? reasons.join('; ') : null;
}
