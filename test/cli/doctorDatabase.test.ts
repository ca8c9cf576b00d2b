/**
 * doctor checks the database (reachable, migrations, the role's rights when some are pending),
 * and `start` exits 2 with one plain sentence and the fix on each failure that is the admin's to
 * fix (issue 23, item 4). Outages are a closed port; the missing database a random name.
 */
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.js';
import { checkDatabase } from '../../src/cli/commands/doctorDatabase.js';
import { openDatabase } from '../../src/store/database.js';
import { migrate, MIGRATIONS_DIR } from '../../src/store/migrations.js';
import {
  createEmptyDatabase,
  createMigratedDatabase,
  TEST_DATABASE_URL,
  type TestDatabase,
} from '../store/helpers.js';
import { closedPort, CONFIG_DIR, crmSync } from './helpers.js';

const configWith = (env: Record<string, string | undefined>) => parseConfig({ CONFIG_DIR, ...env });

/** TEST_DATABASE_URL with another user, database, or port. */
function urlWith(change: (u: URL) => void): string {
  const u = new URL(TEST_DATABASE_URL!);
  change(u);
  return u.toString();
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

describe('doctor: the embedded database', () => {
  it('a DATA_DIR without a database yet passes, naming the path; nothing is created', async () => {
    const dir = path.join(mkdtempSync(path.join(tmpdir(), 'crm-sync-doc-')), 'data');
    const check = await checkDatabase(configWith({ DATA_DIR: dir }));
    expect(check).toMatchObject({ name: 'database', ok: true });
    expect(check.detail).toContain(`none yet in ${path.join(dir, 'pglite')}`);
    expect(readdirSync(path.dirname(dir))).toEqual([]);
  });
});

describe.skipIf(!TEST_DATABASE_URL)('doctor and start: PostgreSQL', () => {
  let migrated: TestDatabase;
  let partial: TestDatabase;
  const role = `crm_sync_t_role_${randomBytes(4).toString('hex')}`;
  beforeAll(async () => {
    [migrated, partial] = await Promise.all([
      createMigratedDatabase('postgres'),
      createEmptyDatabase('postgres'),
    ]);
    const dir = mkdtempSync(path.join(tmpdir(), 'crm-sync-migrations-'));
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    const last = readdirSync(dir)
      .filter((f) => /^\d/.test(f))
      .sort()
      .at(-1)!;
    rmSync(path.join(dir, last), { recursive: true });
    const db = await openDatabase({ databaseUrl: partial.url, dataDir: partial.dataDir });
    await migrate(db, { migrationsDir: dir });
    await db.close();
    // A role that may connect but neither create tables nor alter crm-sync's (PostgreSQL 15+:
    // schema public grants no CREATE to every role).
    await admin(`CREATE ROLE ${role} LOGIN`);
    // An application role: reads and writes the rows, owns nothing.
    const client = new pg.Client({ connectionString: partial.url });
    await client.connect();
    await client.query(
      `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}; GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO ${role}`,
    );
    await client.end();
  }, 120_000);
  afterAll(async () => {
    await Promise.all([migrated?.drop(false), partial?.drop(false)]);
    await admin(`DROP ROLE IF EXISTS ${role}`);
  });

  it('passes on a migrated database', async () => {
    const check = await checkDatabase(configWith({ DATABASE_URL: migrated.url }));
    expect(check.ok).toBe(true);
    expect(check.detail).toMatch(/migrations applied$/);
  });

  it('fails on an unreachable server, a missing database and an unknown role, each naming the fix', async () => {
    const port = await closedPort();
    const cases: [string, RegExp, RegExp][] = [
      [
        urlWith((u) => (u.port = String(port))),
        new RegExp(`^Cannot reach the PostgreSQL server at 127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\)\\.$`),
        /running and that DATABASE_URL names the right host and port/,
      ],
      [
        urlWith((u) => (u.pathname = '/crm_sync_missing_' + randomBytes(4).toString('hex'))),
        /^The PostgreSQL database "crm_sync_missing_[0-9a-f]+" does not exist on 127\.0\.0\.1:5432\.$/,
        /Create it \(createdb crm_sync_missing_[0-9a-f]+\) or fix the database name in DATABASE_URL/,
      ],
      [
        urlWith((u) => (u.username = 'crm_sync_nobody')),
        /^PostgreSQL on 127\.0\.0\.1:5432 refused the role "crm_sync_nobody" \(role "crm_sync_nobody" does not exist\)\.$/,
        /Create the role or fix the user name and password in DATABASE_URL/,
      ],
    ];
    for (const [url, detail, fix] of cases) {
      const check = await checkDatabase(configWith({ DATABASE_URL: url }));
      expect(check.ok).toBe(false);
      expect(check.detail).toMatch(detail);
      expect(check.fix).toMatch(fix);
    }
  });

  it('pending migrations the role cannot apply fail the check', async () => {
    const url = new URL(partial.url!);
    url.username = role;
    const check = await checkDatabase(configWith({ DATABASE_URL: url.toString() }));
    expect(check.ok).toBe(false);
    expect(check.detail).toMatch(
      new RegExp(
        `1 migration\\(s\\) pending, which the role cannot apply \\(role ${role} may not create tables in schema public; role ${role} does not own \\d+ table\\(s\\) it must alter\\)`,
      ),
    );
    // The owner may: pending is then fine, start applies them.
    const owner = await checkDatabase(configWith({ DATABASE_URL: partial.url }));
    expect(owner).toMatchObject({ ok: true });
    expect(owner.detail).toMatch(/1 migration\(s\) pending; crm-sync start \(or migrate\) applies them$/);
  });

  it('start: an unreachable database exits 2 with one sentence and the fix, no stack', async () => {
    const port = await closedPort();
    const { code, stderr } = await crmSync(['start'], {
      DATABASE_URL: urlWith((u) => (u.port = String(port))),
      CONFIG_DIR,
      SERVICE_API_BASE_URL: 'http://127.0.0.1:9',
      SERVICE_API_KEY: 'k',
      SERVICE_WEBHOOK_SECRET: 's',
      HUBSPOT_ACCESS_TOKEN: 't',
    });
    expect(stderr.trim()).toBe(
      `Cannot reach the PostgreSQL server at 127.0.0.1:${port} (ECONNREFUSED). Check that it is running and that DATABASE_URL names the right host and port.`,
    );
    expect(code).toBe(2);
  });

  it('start: a missing database and an unknown role exit 2 with one sentence and the fix', async () => {
    const name = `crm_sync_missing_${randomBytes(4).toString('hex')}`;
    const cases: [string, string][] = [
      [
        urlWith((u) => (u.pathname = `/${name}`)),
        `The PostgreSQL database "${name}" does not exist on 127.0.0.1:5432. Create it (createdb ${name}) or fix the database name in DATABASE_URL.`,
      ],
      [
        urlWith((u) => (u.username = 'crm_sync_nobody')),
        'PostgreSQL on 127.0.0.1:5432 refused the role "crm_sync_nobody" (role "crm_sync_nobody" does not exist). Create the role or fix the user name and password in DATABASE_URL.',
      ],
    ];
    for (const [url, sentence] of cases) {
      const { code, stderr } = await crmSync(['start'], {
        DATABASE_URL: url,
        CONFIG_DIR,
        SERVICE_API_BASE_URL: 'http://127.0.0.1:9',
        SERVICE_API_KEY: 'k',
        SERVICE_WEBHOOK_SECRET: 's',
        HUBSPOT_ACCESS_TOKEN: 't',
      });
      expect(stderr.trim()).toBe(sentence);
      expect(code).toBe(2);
    }
  });

  it('start: a role that cannot apply pending migrations exits 2 naming the fix', async () => {
    const url = new URL(partial.url!);
    url.username = role;
    const { code, stderr } = await crmSync(['start'], {
      DATABASE_URL: url.toString(),
      CONFIG_DIR,
      SERVICE_API_BASE_URL: 'http://127.0.0.1:9',
      SERVICE_API_KEY: 'k',
      SERVICE_WEBHOOK_SECRET: 's',
      HUBSPOT_ACCESS_TOKEN: 't',
    });
    expect(stderr.trim()).toMatch(
      /^The database role may not create or alter crm-sync's tables at .* \((permission denied|must be owner)[^\n]*\)\. Grant it CREATE on schema public/,
    );
    expect(code).toBe(2);
  });
});
