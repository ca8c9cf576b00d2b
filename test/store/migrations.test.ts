import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  allApplied,
  diffMigrationsToSchema,
  migrate,
  migrationStatus,
  MIGRATIONS_DIR,
  readMigrations,
  SCHEMA_PATH,
} from '../../src/store/migrations.js';
import { schemaEngineVersion } from '../../src/store/schemaEngine.js';
import { createEmptyDatabase, DATABASE_KINDS, openTestDatabase, type TestDatabase } from './helpers.js';

const TABLES = [
  '_prisma_migrations',
  'budget_ledger',
  'budget_pause',
  'budget_request',
  'call_followup',
  'console_session',
  'crm_credential',
  'crm_field_gap',
  'crm_ledger',
  'crm_request',
  'deal_call',
  'deal_signal',
  'job',
  'leader_lease',
  'sync_cursor',
  'sync_event',
  'sync_status',
  'webhook_inbox',
];

const scratch = mkdtempSync(path.join(os.tmpdir(), 'crm-sync-migrations-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const migrationNames = readdirSync(MIGRATIONS_DIR)
  .filter((n) => !n.endsWith('.toml'))
  .sort();

describe.each(DATABASE_KINDS)('migrations on %s', (kind) => {
  const targets: TestDatabase[] = [];
  afterAll(async () => {
    for (const t of targets) await t.drop(false);
  });

  it('apply to an empty database, then a second run applies nothing', async () => {
    const target = await createEmptyDatabase(kind);
    targets.push(target);
    const db = await openTestDatabase(target);
    try {
      expect((await migrationStatus(db)).pending).toEqual(migrationNames);
      expect(await migrate(db)).toEqual(migrationNames);
      expect(await migrate(db)).toEqual([]);
      expect(await migrationStatus(db)).toEqual({
        applied: migrationNames,
        pending: [],
        failed: [],
        edited: [],
        unknown: [],
      });

      const tables = await db.prisma.$queryRaw<{ table_name: string }[]>`
        SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`;
      expect(tables.map((t) => t.table_name)).toEqual(TABLES);
      const rows = await db.prisma.$queryRaw<{ migration_name: string; checksum: string }[]>`
        SELECT migration_name, checksum FROM _prisma_migrations ORDER BY migration_name`;
      expect(rows.map((r) => r.migration_name)).toEqual(migrationNames);
    } finally {
      await db.close();
    }
  });

  it('know without the schema engine when every migration is applied, and not when one is new or edited', async () => {
    const target = await createEmptyDatabase(kind);
    targets.push(target);
    const db = await openTestDatabase(target);
    try {
      expect(await allApplied(db, readMigrations())).toBe(false);
      await migrate(db);
      expect(await allApplied(db, readMigrations())).toBe(true);

      const edited = path.join(scratch, `${kind}-edited`);
      cpSync(MIGRATIONS_DIR, edited, { recursive: true });
      const last = path.join(edited, migrationNames.at(-1)!, 'migration.sql');
      writeFileSync(last, `${readFileSync(last, 'utf8')}\n-- edited\n`);
      expect(await allApplied(db, readMigrations(edited))).toBe(false);

      const added = path.join(scratch, `${kind}-added`);
      cpSync(MIGRATIONS_DIR, added, { recursive: true });
      mkdirSync(path.join(added, '29990101000000_new'));
      writeFileSync(path.join(added, '29990101000000_new', 'migration.sql'), 'SELECT 1;\n');
      expect(await allApplied(db, readMigrations(added))).toBe(false);
    } finally {
      await db.close();
    }
  }, 120_000);

  it('record a failing migration as failed and refuse to go on until it is resolved', async () => {
    const dir = path.join(scratch, `${kind}-failing`);
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    const bad = path.join(dir, '29990101000000_bad');
    mkdirSync(bad);
    writeFileSync(
      path.join(bad, 'migration.sql'),
      'CREATE TABLE half_done (id int);\nSELECT * FROM no_such_table;\n',
    );

    const target = await createEmptyDatabase(kind);
    targets.push(target);
    const db = await openTestDatabase(target);
    try {
      await expect(migrate(db, { migrationsDir: dir })).rejects.toThrow(/no_such_table/);
      const status = await migrationStatus(db, { migrationsDir: dir });
      expect(status.failed).toEqual(['29990101000000_bad']);
      await expect(migrate(db, { migrationsDir: dir })).rejects.toThrow(/29990101000000_bad/);
    } finally {
      await db.close();
    }
  });
});

describe('schema.prisma and prisma/migrations', () => {
  it('agree: replaying the migrations gives exactly the schema', async () => {
    expect(await diffMigrationsToSchema()).toBe('');
  });

  it('disagree when the schema gains a column the migrations lack (the check can fail)', async () => {
    const schema = readFileSync(SCHEMA_PATH, 'utf8').replace(
      'model LeaderLease {',
      'model LeaderLease {\n  note String?',
    );
    const changed = path.join(scratch, 'changed.prisma');
    writeFileSync(changed, schema);
    const sql = await diffMigrationsToSchema({ schemaPath: changed });
    expect(sql).toMatch(/ALTER TABLE "leader_lease" ADD COLUMN\s+"note" TEXT/);
  });

  it('use the pinned schema engine build (bump it on purpose, with these tests)', async () => {
    expect(await schemaEngineVersion()).toBe('59be4fda12412a79eeb9c2ae727b6aa723593323');
    const pkg = JSON.parse(readFileSync(path.join(SCHEMA_PATH, '../../package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const prismaPins = Object.entries({ ...pkg.dependencies, ...pkg.devDependencies }).filter(
      ([name]) => name.startsWith('@prisma/') || name === 'prisma' || name === 'pglite-prisma-adapter',
    );
    expect(prismaPins.length).toBeGreaterThan(5);
    for (const [name, version] of prismaPins) expect(version, name).toMatch(/^\d+\.\d+\.\d+(-[\w.]+)?$/);
  });
});
