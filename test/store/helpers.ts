import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { openDatabase, type Database, type DatabaseKind } from '../../src/store/database.js';
import { migrate, MIGRATIONS_DIR } from '../../src/store/migrations.js';

/**
 * Test databases: every store test runs on the embedded PGlite, and also on PostgreSQL when
 * TEST_DATABASE_URL is set. Each test file gets its own fresh database (PostgreSQL: a new
 * database crm_sync_t_<random>; embedded: a new data dir under os.tmpdir()), dropped afterwards
 * unless a test failed, so a failure can be inspected.
 */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL?.trim() || undefined;
export const DATABASE_KINDS: DatabaseKind[] = TEST_DATABASE_URL ? ['embedded', 'postgres'] : ['embedded'];

export interface TestDatabase {
  kind: DatabaseKind;
  /** PostgreSQL URL of the test database, or undefined for embedded. */
  url: string | undefined;
  /** The data dir (embedded) or a scratch dir (postgres) for this file. */
  dataDir: string;
  /** Drops the database unless `keep`. */
  drop(keep: boolean): Promise<void>;
}

/** Creates an empty database of `kind` (no migrations applied). */
export async function createEmptyDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'crm-sync-t-'));
  if (kind === 'embedded') {
    return { kind, url: undefined, dataDir, drop: async (keep) => dropDir(dataDir, keep) };
  }
  const name = `crm_sync_t_${randomBytes(5).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = withDatabase(requirePgUrl(), name);
  return {
    kind,
    url,
    dataDir,
    drop: async (keep) => {
      if (keep) {
        console.warn(`kept test database ${name} for inspection`);
      } else {
        await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }
      dropDir(dataDir, keep);
    },
  };
}

/**
 * A migrated database of `kind`. The embedded one is a copy of a migrated template (initdb of
 * PGlite takes seconds; a copy, a fraction), made once per migration set in os.tmpdir().
 */
export async function createMigratedDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  if (kind === 'postgres') {
    const target = await createEmptyDatabase(kind);
    const db = await openDatabase({ databaseUrl: target.url, dataDir: target.dataDir });
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
    return target;
  }
  const template = await embeddedTemplate();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'crm-sync-t-'));
  cpSync(template, dataDir, { recursive: true });
  return { kind, url: undefined, dataDir, drop: async (keep) => dropDir(dataDir, keep) };
}

export function openTestDatabase(target: TestDatabase): Promise<Database> {
  return openDatabase({ databaseUrl: target.url, dataDir: target.dataDir });
}

/**
 * For one describe block: a migrated database opened before its tests and dropped after (kept
 * when a test failed). Returns a getter.
 */
export function useMigratedDatabase(kind: DatabaseKind): () => { db: Database; target: TestDatabase } {
  let target: TestDatabase | undefined;
  let db: Database | undefined;
  let failed = false;
  beforeAll(async () => {
    target = await createMigratedDatabase(kind);
    db = await openTestDatabase(target);
  });
  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') failed = true;
  });
  afterAll(async () => {
    await db?.close();
    await target?.drop(failed);
  });
  return () => {
    if (!db || !target) throw new Error('test database not open yet');
    return { db, target };
  };
}

function requirePgUrl(): string {
  if (!TEST_DATABASE_URL) throw new Error('TEST_DATABASE_URL is not set');
  return TEST_DATABASE_URL;
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: requirePgUrl() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

function dropDir(dir: string, keep: boolean): void {
  if (keep) console.warn(`kept test data dir ${dir} for inspection`);
  else rmSync(dir, { recursive: true, force: true });
}

let templatePromise: Promise<string> | undefined;

function embeddedTemplate(): Promise<string> {
  templatePromise ??= buildEmbeddedTemplate();
  return templatePromise;
}

async function buildEmbeddedTemplate(): Promise<string> {
  const dir = path.join(os.tmpdir(), `crm-sync-test-template-${templateKey()}`);
  if (existsSync(dir)) return dir;
  // Built aside and renamed into place, so a parallel test process never sees half a template.
  const building = mkdtempSync(`${dir}.building-`);
  const db = await openDatabase({ dataDir: building });
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
  try {
    renameSync(building, dir);
  } catch {
    rmSync(building, { recursive: true, force: true }); // another process finished first
  }
  return dir;
}

/** Changes whenever the migrations or PGlite change. */
function templateKey(): string {
  const hash = createHash('sha256');
  // The package's exports hide its package.json; find it from its entry point.
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  hash.update(
    readFileSync(
      path.join(
        entry.slice(0, entry.lastIndexOf('node_modules')),
        'node_modules/@electric-sql/pglite/package.json',
      ),
    ),
  );
  for (const name of readdirSync(MIGRATIONS_DIR).sort()) {
    const file = path.join(MIGRATIONS_DIR, name, 'migration.sql');
    if (existsSync(file)) hash.update(name).update(readFileSync(file));
  }
  return hash.digest('hex').slice(0, 16);
}
