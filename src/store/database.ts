import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import type { Logger } from '../log/logger.js';
import { silentLogger } from '../log/logger.js';
import { PrismaClient, type Prisma } from '../generated/prisma/client.js';
import { SetupError } from '../config/setupError.js';
import { explainConnectFailure } from './databaseErrors.js';
import { acquireEmbeddedLock } from './embeddedLock.js';
import { seedFromTemplate } from './embeddedTemplate.js';
import { prioritise } from './livePriority.js';
import { isPrepared } from './unnest.js';
import {
  embeddedMigrationAdapter,
  postgresMigrationAdapter,
  type MigrationAdapter,
} from './migrationAdapters.js';

/** The Prisma client, or a transaction of it: every store function takes one of these first. */
export type Db = PrismaClient | Prisma.TransactionClient;

/**
 * Runs `fn` in a transaction: a new one on a client, or the caller's own when `db` already is one,
 * so store functions compose inside a caller's transaction. On the embedded database a
 * transaction holds its only connection: keep them short.
 */
export function inTransaction<T>(db: Db, fn: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  // A transaction client lacks $connect. (It has $transaction, for savepoints, which the PGlite
  // adapter does not implement, so nesting is avoided rather than relied on.)
  return '$connect' in db ? db.$transaction(fn) : fn(db);
}

export type DatabaseKind = 'postgres' | 'embedded';

export interface Database {
  prisma: PrismaClient;
  /**
   * The client of the job runner's live lane, so that a live call's queries never wait behind
   * bulk work: on PostgreSQL a small pool of its own; embedded, the same client (its one
   * connection serves live work first, see src/store/livePriority.ts).
   */
  live: PrismaClient;
  kind: DatabaseKind;
  /** Where the data lives, for messages: the URL without its password, or the data directory. */
  location: string;
  /** A fresh driver adapter for the schema engine (migrations); the caller disposes it. */
  migrationAdapter(): MigrationAdapter;
  close(): Promise<void>;
  /** PostgreSQL: one round trip through the driver, rejecting with the driver's own error. */
  ping?: (() => Promise<void>) | undefined;
}

export interface OpenDatabaseOptions {
  /** PostgreSQL URL; when absent, the embedded database under `dataDir` is used. */
  databaseUrl?: string | undefined;
  /** The embedded database lives in `<dataDir>/pglite`. */
  dataDir: string;
  logger?: Logger | undefined;
  /** Connections in the PostgreSQL pool (default 10, pg's default). */
  poolSize?: number | undefined;
  /**
   * A new embedded database is filled from the pre-built template in this directory when there is
   * a usable one (src/store/embeddedTemplate.ts: it holds the migrations, so only openers that
   * migrate anyway pass it); otherwise PGlite runs initdb.
   */
  templateDir?: string | undefined;
  /**
   * Only open a database crm-sync has already set up (for commands that read): never create an
   * embedded data directory, and refuse a database without crm-sync's tables, naming where it
   * looked and the fix.
   */
  existing?: boolean | undefined;
}

/** Opens PostgreSQL (DATABASE_URL) or the embedded PGlite database, and checks it answers. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const logger = options.logger ?? silentLogger;
  if (!options.databaseUrl && options.existing) refuseMissingEmbedded(options.dataDir);
  const db = options.databaseUrl
    ? openPostgres(options.databaseUrl, options.poolSize, logger)
    : await openEmbedded(options.dataDir, options.templateDir);
  try {
    // PostgreSQL: asked through the driver itself, whose error (unlike Prisma's) says what failed.
    if (db.ping)
      await db
        .ping()
        .catch((err: unknown) => Promise.reject(explainConnectFailure(err, options.databaseUrl!)));
    await db.prisma.$queryRaw`SELECT 1`;
    if (options.existing) await refuseWithoutTables(db);
  } catch (err) {
    await db.close().catch(() => undefined);
    if (err instanceof SetupError) throw err;
    throw new Error(`cannot reach the database at ${db.location}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  logger.debug({ kind: db.kind, location: db.location }, 'database opened');
  return db;
}

/** Where the embedded database of `dataDir` keeps its files. */
export function embeddedDir(dataDir: string): string {
  return path.join(dataDir, 'pglite');
}

const FIX_WHERE =
  'Set DATA_DIR to the directory the worker uses (the systemd unit sets DATA_DIR=/var/lib/crm-sync in the unit itself), or DATABASE_URL for PostgreSQL.';

/** True when `dataDir` holds an embedded database (created by a worker or `migrate`). */
export function embeddedExists(dataDir: string): boolean {
  return existsSync(path.join(embeddedDir(dataDir), 'PG_VERSION'));
}

function refuseMissingEmbedded(dataDir: string): void {
  if (embeddedExists(dataDir)) return;
  throw new SetupError(`There is no crm-sync database in ${path.resolve(embeddedDir(dataDir))}.`, FIX_WHERE);
}

async function refuseWithoutTables(db: Database): Promise<void> {
  const [table] = await db.prisma.$queryRaw<{ name: string | null }[]>`
    SELECT to_regclass('_prisma_migrations')::text AS name`;
  if (table?.name) return;
  const where = db.kind === 'embedded' ? path.resolve(embeddedDir(db.location)) : db.location;
  throw new SetupError(
    `The database at ${where} holds no crm-sync tables.`,
    `${db.kind === 'embedded' ? FIX_WHERE : 'Check that DATABASE_URL names the database the worker uses.'} \`crm-sync migrate\` creates the tables in a new one.`,
  );
}

/** How long a new PostgreSQL connection (or a free one from the pool) is waited for. */
export const CONNECT_TIMEOUT_MS = 5_000;

/** Connections of the live lane's own pool: context pushes run a few at a time. */
const LIVE_POOL_SIZE = 3;

function openPostgres(url: string, poolSize: number | undefined, logger: Logger): Database {
  const open = (max: number) => {
    const pool = new pg.Pool({
      connectionString: url,
      max,
      // A database that does not answer (a partition, not a refusal) fails a connect or a wait for
      // a pooled connection after this, instead of holding every loop and webhook forever (pg's
      // default is no limit). Well under the webhook receiver's own 8 s bound.
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      // Lets the OS notice a connection whose peer vanished, so the pool drops and replaces it.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    // An idle client losing its connection must not crash the process; the pool replaces it.
    pool.on('error', (err) => logger.warn({ err: err.message }, 'database connection lost'));
    const adapter = new PrismaPg(pool, { statementNameGenerator: preparedStatementName });
    return { pool, prisma: new PrismaClient({ adapter }) };
  };
  const main = open(poolSize ?? 10);
  // Created on first use: a process that runs no jobs (a CLI command) never connects it.
  let live: ReturnType<typeof open> | undefined;
  return {
    prisma: main.prisma,
    get live() {
      live ??= open(LIVE_POOL_SIZE);
      return live.prisma;
    },
    kind: 'postgres',
    location: redactUrl(url),
    migrationAdapter: () => postgresMigrationAdapter(url),
    ping: async () => {
      await main.pool.query('SELECT 1');
    },
    close: async () => {
      for (const c of [main, live]) {
        if (!c) continue;
        await c.prisma.$disconnect();
        await c.pool.end();
      }
    },
  };
}

/**
 * PGlite's server settings: its defaults plus smaller buffers. PostgreSQL's default
 * shared_buffers (128MB, with wal_buffers 4MB derived from it) lives in the WebAssembly memory,
 * which only grows; the worker's working set is a few MB of hot rows (queue, inbox, ledger), so
 * 16MB of buffers cost nothing measurable in the benchmarks and keep ~60 MB of RSS off an idle
 * worker. Durability settings are left alone (no relaxedDurability).
 */
const EMBEDDED_SETTINGS = ['-c', 'shared_buffers=16MB'];

async function openEmbedded(dataDir: string, templateDir: string | undefined): Promise<Database> {
  const lock = acquireEmbeddedLock(dataDir);
  try {
    const dir = embeddedDir(dataDir);
    // A first start fills the directory from the pre-built template instead of running initdb
    // (~1.1 GB at its peak in WebAssembly); without one PGlite runs initdb as before.
    if (templateDir && !existsSync(path.join(dir, 'PG_VERSION'))) await seedFromTemplate(dir, templateDir);
    mkdirSync(dir, { recursive: true });
    // Imported here, not at the top: a PostgreSQL worker never loads PGlite (~3 MB of RSS).
    const [{ PGlite }, { PrismaPGlite }] = await Promise.all([
      import('@electric-sql/pglite'),
      import('pglite-prisma-adapter'),
    ]);
    const startParams = [...PGlite.defaultStartParams, ...EMBEDDED_SETTINGS];
    const pglite = await PGlite.create({ dataDir: dir, startParams });
    const prisma = new PrismaClient({ adapter: new PrismaPGlite(prioritise(pglite)) });
    return {
      prisma,
      live: prisma,
      kind: 'embedded',
      location: dataDir,
      migrationAdapter: () => embeddedMigrationAdapter(pglite),
      close: async () => {
        try {
          await prisma.$disconnect();
          await pglite.close();
        } finally {
          lock.release();
        }
      },
    };
  } catch (err) {
    lock.release();
    throw err;
  }
}

/** postgresql://user:secret@host/db -> postgresql://user:***@host/db */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgresql://(unparsable URL)';
  }
}

/**
 * A statement marked PREPARED (src/store/unnest.ts) is named by its text, so `pg` prepares it
 * once per connection and PostgreSQL keeps its plan; others go unnamed (parsed and planned each
 * time, as before). The name is a hash: PostgreSQL cuts identifiers at 63 bytes.
 */
function preparedStatementName(query: { sql: string }): string {
  // '' is pg's unnamed statement.
  if (!isPrepared(query.sql)) return '';
  return `crm_sync_${createHash('sha1').update(query.sql).digest('hex')}`;
}
