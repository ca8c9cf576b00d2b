/**
 * `db copy`: the embedded database's rows land unchanged in an empty PostgreSQL (real server,
 * TEST_DATABASE_URL), sequences continue after the copied ids, a non-empty target is refused,
 * and a column or table added by a later migration is copied without changing the copier.
 */
import { cpSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/store/database.js';
import { copyDatabase, DbCopyError } from '../../src/store/dbCopy.js';
import { MIGRATIONS_DIR } from '../../src/store/migrations.js';
import { copyOrder, type TableShape } from '../../src/store/schemaIntrospection.js';
import { createEmptyDatabase, TEST_DATABASE_URL, type TestDatabase } from './helpers.js';

const at = (iso: string) => new Date(iso);

/** One or more rows in every table, with the awkward values: arrays, JSON, quotes, bigints, dates. */
async function seed(db: Database): Promise<void> {
  const p = db.prisma;
  await p.syncStatus.createMany({
    data: [
      {
        callId: 'call_1',
        crm: 'hubspot',
        state: 'written_back',
        crmContactId: '101',
        crmActivityId: '9001',
        crmFollowupIds: ['n1', 'n2'],
        followupsRequestedAt: at('2026-11-20T10:00:00.123Z'),
        writtenBackAt: at('2026-11-20T10:00:05.456Z'),
        participantEmail: 'jane@acme.example',
        overallScore: 82,
      },
      {
        callId: 'call_2',
        crm: 'hubspot',
        state: 'failed',
        lastErrorCode: 'CRM_SETUP',
        lastErrorMessage: 'it\'s "odd"',
      },
    ],
  });
  for (let i = 0; i < 7; i++) {
    await p.syncEvent.create({
      data: { callId: 'call_1', crm: 'hubspot', at: at(`2026-11-20T10:00:0${i}.000Z`), toState: `s${i}` },
    });
  }
  await p.callFollowup.create({
    data: {
      callId: 'call_1',
      draftId: 'd1',
      subject: 'Next steps ✓',
      body: 'Line 1\nLine "2"\\',
      toAddresses: ['jane@acme.example', "o'brien@acme.example"],
      raw: { id: 'd1', nested: { list: [1, 2.5, null, 'x'] }, big: 12345678901234 },
      receivedAt: at('2026-11-20T10:00:03.000Z'),
      crmId: 'n1',
      writtenAt: at('2026-11-20T10:00:04.000Z'),
    },
  });
  await p.syncCursor.create({
    data: { name: 'calls', cursor: 'opaque==', lastCallCreatedAt: at('2026-11-20T09:59:00Z') },
  });
  await p.webhookInbox.create({
    data: {
      eventId: 'evt_1',
      type: 'call.completed',
      callId: 'call_1',
      rawBody: '{"id":"evt_1"}',
      signatureOk: true,
      receivedAt: at('2026-11-20T10:00:01Z'),
      outcome: 'processed',
    },
  });
  await p.job.create({
    data: { kind: 'writeback', key: 'writeback:call_2', payload: { callId: 'call_2' }, state: 'failed' },
  });
  await p.budgetLedger.create({ data: { ledger: 'key1', day: at('2026-11-20T00:00:00Z'), used: 1234 } });
  await p.budgetRequest.create({
    data: { ledger: 'key1', startedAt: at('2026-11-20T10:00:00Z'), priority: 'live' },
  });
  await p.budgetPause.create({ data: { ledger: 'key1', pausedUntil: at('2026-11-20T10:01:00Z') } });
  await p.leaderLease.create({
    data: {
      name: 'poller',
      holder: 'w1',
      acquiredAt: at('2026-11-20T10:00:00Z'),
      expiresAt: at('2026-11-20T10:00:30Z'),
    },
  });
}

/** Every table as Prisma reads it back, in a stable order. */
async function snapshot(db: Database) {
  const p = db.prisma;
  return {
    syncStatus: await p.syncStatus.findMany({ orderBy: { callId: 'asc' } }),
    syncEvent: await p.syncEvent.findMany({ orderBy: { id: 'asc' } }),
    callFollowup: await p.callFollowup.findMany(),
    syncCursor: await p.syncCursor.findMany(),
    webhookInbox: await p.webhookInbox.findMany(),
    job: await p.job.findMany(),
    budgetLedger: await p.budgetLedger.findMany(),
    budgetRequest: await p.budgetRequest.findMany(),
    budgetPause: await p.budgetPause.findMany(),
    leaderLease: await p.leaderLease.findMany(),
  };
}

describe('copyOrder', () => {
  const shape = (name: string, references: string[] = []): TableShape => ({
    name,
    columns: ['id'],
    primaryKey: ['id'],
    references,
  });

  it('puts every table after the tables it references', () => {
    const shapes = new Map(
      [shape('a_child', ['m_parent']), shape('m_parent', ['z_root']), shape('z_root'), shape('b_free')].map(
        (s) => [s.name, s],
      ),
    );
    expect(copyOrder(shapes).map((s) => s.name)).toEqual(['b_free', 'z_root', 'm_parent', 'a_child']);
  });

  it('refuses a reference cycle', () => {
    const shapes = new Map([shape('a', ['b']), shape('b', ['a'])].map((s) => [s.name, s]));
    expect(() => copyOrder(shapes)).toThrow(/cycle among a, b/);
  });
});

describe.skipIf(!TEST_DATABASE_URL)('db copy from the embedded database to PostgreSQL', () => {
  let source: TestDatabase;
  let target: TestDatabase;
  let sourceDb: Database;
  let migrationsDir: string;

  beforeAll(async () => {
    // The shipped migrations plus one a parallel branch might add: a nullable JSON column and a
    // new table with a foreign key. The copier must take both without knowing them.
    migrationsDir = mkdtempSync(path.join(os.tmpdir(), 'crm-sync-migrations-'));
    cpSync(MIGRATIONS_DIR, migrationsDir, { recursive: true });
    mkdirSync(path.join(migrationsDir, '29990101000000_later_change'));
    writeFileSync(
      path.join(migrationsDir, '29990101000000_later_change', 'migration.sql'),
      `ALTER TABLE "sync_status" ADD COLUMN "later_note" JSONB;
CREATE TABLE "a_note" ("id" BIGSERIAL PRIMARY KEY, "call_id" TEXT NOT NULL, "crm" TEXT NOT NULL, "text" TEXT,
  CONSTRAINT "a_note_status_fkey" FOREIGN KEY ("call_id", "crm") REFERENCES "sync_status"("call_id", "crm"));
`,
    );
    [source, target] = await Promise.all([createEmptyDatabase('embedded'), createEmptyDatabase('postgres')]);
    sourceDb = await openDatabase({ dataDir: source.dataDir });
    const { migrate } = await import('../../src/store/migrations.js');
    await migrate(sourceDb, { migrationsDir });
    await seed(sourceDb);
    await sourceDb.prisma.$executeRawUnsafe(
      `UPDATE sync_status SET later_note = '{"rule":"email","candidates":[1,2]}' WHERE call_id = 'call_1'`,
    );
    await sourceDb.prisma.$executeRawUnsafe(
      `INSERT INTO a_note (call_id, crm, text) VALUES ('call_1', 'hubspot', 'n')`,
    );
  }, 120_000);

  afterAll(async () => {
    await sourceDb?.close();
    await Promise.all([source?.drop(false), target?.drop(false)]);
    rmSync(migrationsDir, { recursive: true, force: true });
  });

  it('copies every row of every table, in batches, and new ids continue after the copied ones', async () => {
    const progress: string[] = [];
    const result = await copyDatabase(sourceDb, target.url!, {
      batchSize: 3,
      migrationsDir,
      onTable: (table) => progress.push(table),
    });
    const rows = Object.fromEntries(result.tables.map((t) => [t.table, t.rows]));
    expect(rows).toMatchObject({
      sync_status: 2,
      sync_event: 7,
      call_followup: 1,
      a_note: 1,
      sync_cursor: 1,
    });
    expect(Object.keys(rows)).not.toContain('_prisma_migrations');
    // The referencing table comes after the one it references.
    expect(progress.indexOf('a_note')).toBeGreaterThan(progress.indexOf('sync_status'));

    const copy = await openDatabase({ databaseUrl: target.url, dataDir: target.dataDir });
    try {
      expect(await snapshot(copy)).toEqual(await snapshot(sourceDb));
      const [decision] = await copy.prisma.$queryRawUnsafe<{ d: unknown }[]>(
        `SELECT later_note AS d FROM sync_status WHERE call_id = 'call_1'`,
      );
      expect(decision?.d).toEqual({ rule: 'email', candidates: [1, 2] });
      const event = await copy.prisma.syncEvent.create({
        data: { callId: 'call_1', crm: 'hubspot', at: new Date(), toState: 'next' },
      });
      const maxCopied = (await sourceDb.prisma.syncEvent.aggregate({ _max: { id: true } }))._max.id!;
      expect(event.id).toBe(maxCopied + 1n);
    } finally {
      await copy.close();
    }
  });

  it('refuses a target that already holds data, and changes nothing there', async () => {
    const client = new pg.Client({ connectionString: target.url });
    await client.connect();
    try {
      const count = async () => (await client.query('SELECT count(*)::int AS n FROM sync_event')).rows[0].n;
      const before = await count();
      await expect(copyDatabase(sourceDb, target.url!, { migrationsDir })).rejects.toThrow(DbCopyError);
      await expect(copyDatabase(sourceDb, target.url!, { migrationsDir })).rejects.toThrow(
        /already holds crm-sync data \(tables .*sync_status.*\); db copy only fills an empty database/,
      );
      expect(await count()).toBe(before);
    } finally {
      await client.end();
    }
  });

  it('never shows the password of the target URL', async () => {
    const url = new URL(target.url!);
    url.password = 'hunter2-secret';
    const error = await copyDatabase(sourceDb, url.toString(), { migrationsDir }).catch((err: Error) => err);
    expect(error).toBeInstanceOf(DbCopyError);
    expect(String((error as Error).message)).toContain(':***@');
    expect(String((error as Error).message)).not.toContain('hunter2-secret');
  });
});

describe.skipIf(!TEST_DATABASE_URL)('db copy refuses a source it should not copy', () => {
  let source: TestDatabase;
  let target: TestDatabase;
  let sourceDb: Database;
  beforeAll(async () => {
    [source, target] = await Promise.all([createEmptyDatabase('postgres'), createEmptyDatabase('postgres')]);
    sourceDb = await openDatabase({ databaseUrl: source.url, dataDir: source.dataDir });
    const { migrate } = await import('../../src/store/migrations.js');
    await migrate(sourceDb);
  }, 120_000);
  afterAll(async () => {
    await sourceDb?.close();
    await Promise.all([source?.drop(false), target?.drop(false)]);
  });

  const targetTables = async () => {
    const client = new pg.Client({ connectionString: target.url });
    await client.connect();
    try {
      return (await client.query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)).rowCount;
    } finally {
      await client.end();
    }
  };

  it('a source with no crm-sync data: refused, naming it, and the target gets no table', async () => {
    await expect(copyDatabase(sourceDb, target.url!)).rejects.toThrow(
      `${sourceDb.location} holds no crm-sync data (every table is empty), so there is nothing to copy and nothing was created.`,
    );
    expect(await targetTables()).toBe(0);
  });

  it('a source a worker is using (live lease, running job): refused unless whileRunning', async () => {
    const p = sourceDb.prisma;
    await p.syncStatus.create({ data: { callId: 'call_live', crm: 'hubspot', state: 'queued' } });
    await p.$executeRawUnsafe(
      `INSERT INTO leader_lease (name, holder, acquired_at, expires_at) VALUES ('poller', 'w1', now(), now() + interval '1 hour')`,
    );
    await p.$executeRawUnsafe(
      `INSERT INTO job (kind, key, payload, state, locked_by, locked_until) VALUES ('writeback', 'writeback:call_live', '{}', 'running', 'w1', now() + interval '1 hour')`,
    );
    await expect(copyDatabase(sourceDb, target.url!)).rejects.toThrow(
      /a worker is using .* \(1 live lease\(s\), 1 running job\(s\)\), so nothing was copied\. Stop the worker first, or pass --while-running/,
    );
    expect(await targetTables()).toBe(0);
    const result = await copyDatabase(sourceDb, target.url!, { whileRunning: true });
    expect(result.tables.find((t) => t.table === 'job')?.rows).toBe(1);
  });
});
