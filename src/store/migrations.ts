import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MigrationList } from '@prisma/schema-engine-wasm';
import { SetupError } from '../config/setupError.js';
import type { Logger } from '../log/logger.js';
import type { Database } from './database.js';
import { scratchMigrationAdapter } from './migrationAdapters.js';
import { NO_EXTERNAL, withSchemaEngine } from './schemaEngine.js';

/**
 * Prisma-format migrations (`prisma/migrations/<timestamp>_<name>/migration.sql`), applied by the
 * schema engine exactly as `prisma migrate deploy` would: same `_prisma_migrations` table, same
 * checksums, so the native CLI can take over wherever it can run.
 */

/** `<package root>/prisma`, from src/store or dist/store alike. */
export const PRISMA_DIR = fileURLToPath(new URL('../../prisma/', import.meta.url));
export const SCHEMA_PATH = path.join(PRISMA_DIR, 'schema.prisma');
export const MIGRATIONS_DIR = path.join(PRISMA_DIR, 'migrations');

export interface MigrateOptions {
  migrationsDir?: string | undefined;
  logger?: Logger | undefined;
}

/** Reads the migration folders (sorted by name, as Prisma orders them) and the lock file. */
export function readMigrations(migrationsDir = MIGRATIONS_DIR): MigrationList {
  const lockPath = path.join(migrationsDir, 'migration_lock.toml');
  const folders = existsSync(migrationsDir)
    ? readdirSync(migrationsDir)
        .filter((name) => statSync(path.join(migrationsDir, name)).isDirectory())
        .sort()
    : [];
  return {
    baseDir: migrationsDir,
    lockfile: {
      path: 'migration_lock.toml',
      content: existsSync(lockPath) ? readFileSync(lockPath, 'utf8') : null,
    },
    shadowDbInitScript: '',
    migrationDirectories: folders.map((name) => {
      const file = path.join(migrationsDir, name, 'migration.sql');
      return {
        path: name,
        migrationFile: {
          path: 'migration.sql',
          content: existsSync(file)
            ? { tag: 'ok' as const, value: readFileSync(file, 'utf8') }
            : { tag: 'error' as const, value: `${file} is missing` },
        },
      };
    }),
  };
}

/**
 * Applies the migrations not yet applied (in order) and returns their names; none on a second run.
 * A failed migration is recorded and blocks later runs until resolved, as with Prisma's CLI.
 */
export async function migrate(db: Database, options: MigrateOptions = {}): Promise<string[]> {
  try {
    return await applyPending(db, options);
  } catch (err) {
    throw explainRefusedMigration(err, db);
  }
}

async function applyPending(db: Database, options: MigrateOptions): Promise<string[]> {
  const migrationsList = readMigrations(options.migrationsDir);
  // Most starts find nothing to do; the schema engine costs ~60 MB of RSS that stays with the
  // process (its WebAssembly memory is never returned), so it loads only when there is work.
  if (await allApplied(db, migrationsList)) return [];
  const result = await withSchemaEngine(
    db.migrationAdapter(),
    (engine) => engine.applyMigrations({ migrationsList, filters: NO_EXTERNAL }),
    options.logger,
  );
  for (const name of result.appliedMigrationNames)
    options.logger?.info({ migration: name }, 'migration applied');
  return result.appliedMigrationNames;
}

/** A migration the role may not apply (SQLSTATE 42501, "must be owner") is the admin's to fix. */
export function explainRefusedMigration(err: unknown, db: Database): unknown {
  const text = err instanceof Error ? err.message : String(err);
  const refused = /permission denied|must be owner/i.exec(text);
  if (!refused) return err;
  const line = text
    .slice(refused.index)
    .split('\n')[0]!
    .replace(/[`"]+$/, '');
  return new SetupError(
    `The database role may not create or alter crm-sync's tables at ${db.location} (${line}).`,
    'Grant it CREATE on schema public and ownership of the crm-sync tables, or run `crm-sync migrate` once as their owner.',
    { cause: err },
  );
}

/**
 * True when `_prisma_migrations` records every migration folder as applied (finished, not rolled
 * back, same checksum: sha256 of migration.sql, as Prisma stores it) and holds no failed or
 * unknown migration. Anything else goes to the schema engine, which decides as before.
 */
export async function allApplied(db: Database, list: MigrationList): Promise<boolean> {
  const [table] = await db.prisma.$queryRaw<{ name: string | null }[]>`
    SELECT to_regclass('_prisma_migrations')::text AS name`;
  if (!table?.name) return false;
  const rows = await db.prisma.$queryRaw<
    { migration_name: string; checksum: string; finished_at: Date | null; rolled_back_at: Date | null }[]
  >`SELECT migration_name, checksum, finished_at, rolled_back_at FROM _prisma_migrations`;
  const applied = new Map<string, string>();
  for (const row of rows) {
    if (row.rolled_back_at !== null) continue;
    if (row.finished_at === null) return false;
    applied.set(row.migration_name, row.checksum);
  }
  if (applied.size !== list.migrationDirectories.length) return false;
  return list.migrationDirectories.every((dir) => {
    const content = dir.migrationFile.content;
    if (content.tag !== 'ok') return false;
    return applied.get(dir.path) === createHash('sha256').update(content.value).digest('hex');
  });
}

/**
 * Marks a failed migration as rolled back (= `prisma migrate resolve --rolled-back`), after the
 * operator has undone whatever part of it ran; the next `migrate` applies it again.
 */
export async function markMigrationRolledBack(
  db: Database,
  name: string,
  options: MigrateOptions = {},
): Promise<void> {
  await withSchemaEngine(
    db.migrationAdapter(),
    (engine) => engine.markMigrationRolledBack({ migrationName: name }),
    options.logger,
  );
}

export interface MigrationStatus {
  /** Migrations applied to the database (finished, not rolled back), oldest first. */
  applied: string[];
  /** Migrations in the folder not yet applied to the database. */
  pending: string[];
  /** Migrations recorded as failed (they block `migrate` until resolved). */
  failed: string[];
  /** Applied migrations whose migration.sql changed afterwards. */
  edited: string[];
  /** Applied to the database but absent from the folder (a newer version of crm-sync ran here). */
  unknown: string[];
}

/** What `migrate` would do, without changing anything (= `prisma migrate status`). */
export async function migrationStatus(db: Database, options: MigrateOptions = {}): Promise<MigrationStatus> {
  const migrationsList = readMigrations(options.migrationsDir);
  const out = await withSchemaEngine(
    db.migrationAdapter(),
    (engine) =>
      engine.diagnoseMigrationHistory({ migrationsList, optInToShadowDatabase: false, filters: NO_EXTERNAL }),
    options.logger,
  );
  const history = out.history;
  const all = migrationsList.migrationDirectories.map((d) => d.path);
  const applied = out.hasMigrationsTable
    ? (
        await db.prisma.$queryRaw<{ name: string }[]>`
          SELECT migration_name AS name FROM _prisma_migrations
           WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name`
      ).map((r) => r.name)
    : [];
  return {
    applied,
    pending: !out.hasMigrationsTable
      ? all
      : history && 'unappliedMigrationNames' in history
        ? history.unappliedMigrationNames
        : [],
    failed: out.failedMigrationNames,
    edited: out.editedMigrationNames,
    unknown: history && 'unpersistedMigrationNames' in history ? history.unpersistedMigrationNames : [],
  };
}

/**
 * The SQL that takes a database built by the migrations to the schema: empty when they agree.
 * Replays the migrations into an in-memory PGlite shadow database.
 */
export async function diffMigrationsToSchema(
  options: { schemaPath?: string; migrationsDir?: string } = {},
): Promise<string> {
  const schemaPath = options.schemaPath ?? SCHEMA_PATH;
  const migrationsList = readMigrations(options.migrationsDir);
  const result = await withSchemaEngine(await scratchMigrationAdapter(), (engine) =>
    engine.diff({
      from: { tag: 'migrations', ...migrationsList },
      to: {
        tag: 'schemaDatamodel',
        files: [{ path: schemaPath, content: readFileSync(schemaPath, 'utf8') }],
      },
      script: true,
      exitCode: null,
      filters: NO_EXTERNAL,
    }),
  );
  return isEmptyScript(result.stdout ?? '') ? '' : (result.stdout ?? '');
}

/** The SQL that creates the schema from nothing (= `prisma migrate diff --from-empty --script`). */
export async function diffEmptyToSchema(schemaPath = SCHEMA_PATH): Promise<string> {
  const result = await withSchemaEngine(await scratchMigrationAdapter(), (engine) =>
    engine.diff({
      from: { tag: 'empty' },
      to: {
        tag: 'schemaDatamodel',
        files: [{ path: schemaPath, content: readFileSync(schemaPath, 'utf8') }],
      },
      script: true,
      exitCode: null,
      filters: NO_EXTERNAL,
    }),
  );
  return result.stdout ?? '';
}

/** The engine writes "-- This is an empty migration." when nothing differs. */
function isEmptyScript(sql: string): boolean {
  return sql
    .split('\n')
    .map((line) => line.trim())
    .every((line) => line === '' || line.startsWith('--'));
}
