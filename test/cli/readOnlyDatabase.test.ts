/**
 * Commands that only read never create or migrate a database, and `db copy` refuses a source
 * crm-sync never filled, naming where it looked, and creates nothing anywhere (issue 23, item 2).
 */
import { cpSync, existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import { openDatabase } from '../../src/store/database.js';
import { migrate, MIGRATIONS_DIR } from '../../src/store/migrations.js';
import { createEmptyDatabase, TEST_DATABASE_URL, type TestDatabase } from '../store/helpers.js';
import { CONFIG_DIR, crmSync } from './helpers.js';

const wrongDir = () =>
  path.join(mkdtempSync(path.join(tmpdir(), 'crm-sync-wrong-')), 'var', 'lib', 'crm-sync');

async function tablesOf(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const r = await client.query<{ t: string }>(
      `SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`,
    );
    return r.rows.map((x) => x.t);
  } finally {
    await client.end();
  }
}

async function appliedMigrations(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM _prisma_migrations')).rows[0]!
      .n;
  } finally {
    await client.end();
  }
}

describe('read-only commands on a wrong DATA_DIR (embedded)', () => {
  it('status exits 2 naming the path and the fix, and creates nothing', async () => {
    const dir = wrongDir();
    const { code, stderr } = await crmSync(['status'], { DATA_DIR: dir, CONFIG_DIR });
    expect(stderr.trim()).toBe(
      `There is no crm-sync database in ${path.join(dir, 'pglite')}. Set DATA_DIR to the directory the worker uses (the systemd unit sets DATA_DIR=/var/lib/crm-sync in the unit itself), or DATABASE_URL for PostgreSQL.`,
    );
    expect(code).toBe(2);
    expect(existsSync(path.dirname(dir))).toBe(false);
  });

  it('status on an existing but empty directory leaves it empty', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'crm-sync-empty-'));
    const { code, stderr } = await crmSync(['status', '--json'], { DATA_DIR: dir, CONFIG_DIR });
    expect(code).toBe(2);
    expect(stderr).toContain(`no crm-sync database in ${path.join(dir, 'pglite')}`);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe.skipIf(!TEST_DATABASE_URL)('db copy and read-only commands with PostgreSQL', () => {
  let target: TestDatabase;
  let partial: TestDatabase;
  let service: ServiceSandbox;
  beforeAll(async () => {
    [target, partial, service] = await Promise.all([
      createEmptyDatabase('postgres'),
      createEmptyDatabase('postgres'),
      startServiceSandbox({ plan: 'sales', seedCalls: 3 }),
    ]);
    // A database one migration behind: a read-only command must leave it so.
    const dir = mkdtempSync(path.join(tmpdir(), 'crm-sync-migrations-'));
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    const folders = readdirSync(dir)
      .filter((f) => /^\d/.test(f))
      .sort();
    const { rmSync } = await import('node:fs');
    rmSync(path.join(dir, folders.at(-1)!), { recursive: true });
    const db = await openDatabase({ databaseUrl: partial.url, dataDir: partial.dataDir });
    await migrate(db, { migrationsDir: dir });
    await db.close();
  }, 120_000);
  afterAll(async () => {
    await service?.close();
    await Promise.all([target?.drop(false), partial?.drop(false)]);
  });

  it('db copy from an empty DATA_DIR exits non-zero, names the path, and creates nothing anywhere', async () => {
    const dir = wrongDir();
    const { code, stderr, stdout } = await crmSync(['db', 'copy', '--to', target.url!], {
      DATA_DIR: dir,
      CONFIG_DIR,
    });
    expect(code).not.toBe(0);
    expect(stderr).toContain(`There is no crm-sync database in ${path.join(dir, 'pglite')}`);
    expect(stdout).not.toContain('Copied');
    expect(existsSync(path.dirname(dir))).toBe(false);
    expect(await tablesOf(target.url!)).toEqual([]);
  });

  it('status on a PostgreSQL database without crm-sync tables exits 2 and creates none', async () => {
    const { code, stderr } = await crmSync(['status'], { DATABASE_URL: target.url, CONFIG_DIR });
    expect(stderr).toContain(
      'holds no crm-sync tables. Check that DATABASE_URL names the database the worker uses',
    );
    expect(code).toBe(2);
    expect(await tablesOf(target.url!)).toEqual([]);
  });

  it('rematch --dry-run, backfill --plan and status on a database behind this version name the fix and run no migration', async () => {
    const before = await appliedMigrations(partial.url!);
    const env = {
      DATABASE_URL: partial.url,
      CONFIG_DIR,
      SERVICE_API_BASE_URL: service.url,
      SERVICE_API_KEY: service.apiKey,
      SERVICE_WEBHOOK_SECRET: service.webhookSecret,
      SERVICE_PLAN: 'sales',
      HUBSPOT_ACCESS_TOKEN: 'pat-na1-unused',
      HUBSPOT_BASE_URL: 'http://127.0.0.1:9',
    };
    // One migration behind: each says so in one sentence with the fix, exit 2, and migrates nothing.
    for (const args of [
      ['rematch', '--since', '2026-01-01', '--dry-run'],
      ['backfill', '--since', '2020-01-01', '--plan'],
      ['status'],
    ]) {
      const run = await crmSync(args, env);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toMatch(/does not have this version's migrations applied\. .*crm-sync migrate/);
      expect(run.stderr).not.toMatch(/invocation|prisma/i);
    }
    expect(await appliedMigrations(partial.url!)).toBe(before);
  });
});
