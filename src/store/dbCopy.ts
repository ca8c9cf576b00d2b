import path from 'node:path';
import pg from 'pg';
import type { Logger } from '../log/logger.js';
import { silentLogger } from '../log/logger.js';
import { openDatabase, redactUrl, type Database } from './database.js';
import { migrate } from './migrations.js';
import { copyOrder, readSchema, type SqlRunner, type TableShape } from './schemaIntrospection.js';

/**
 * `crm-sync db copy`: moves everything crm-sync keeps (sync status and history, cursor, inbox,
 * jobs, follow-up records, budget ledger, ...) from the current database into an empty
 * PostgreSQL, so an admin can outgrow the embedded default without re-syncing.
 *
 * Generic on purpose: the target is migrated first, then every table of the schema (but Prisma's
 * own `_prisma_migrations`) is copied with the columns the databases report at run time, so a
 * later migration needs no change here. Rows travel as JSON text built and parsed by PostgreSQL
 * itself (json_agg / json_populate_recordset), so timestamps, bigints, arrays and JSON columns
 * keep their exact values without passing through JavaScript types.
 */

export class DbCopyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DbCopyError';
  }
}

export interface DbCopyOptions {
  /** Rows per batch read from the source and inserted into the target. */
  batchSize?: number | undefined;
  /** The migrations both databases are brought to (default: the shipped prisma/migrations). */
  migrationsDir?: string | undefined;
  logger?: Logger | undefined;
  /** Called after each table, for progress output. */
  onTable?: ((table: string, rows: number) => void) | undefined;
  /** Copy even though a worker holds a lease or runs jobs in the source. */
  whileRunning?: boolean | undefined;
}

export interface DbCopyResult {
  /** Rows copied per table, in copy order. */
  tables: { table: string; rows: number }[];
}

/** Copies `source` into the PostgreSQL at `targetUrl`, which must hold no crm-sync rows yet. */
export async function copyDatabase(
  source: Database,
  targetUrl: string,
  options: DbCopyOptions = {},
): Promise<DbCopyResult> {
  const logger = options.logger ?? silentLogger;
  const where = redactUrl(targetUrl);
  const sourceSql: SqlRunner = (sql) => source.prisma.$queryRawUnsafe(sql);
  // Checked before anything is written anywhere: an empty source would leave the target filled
  // with tables, so the corrected retry would be refused.
  await refuseEmptySource(sourceSql, source);
  if (!options.whileRunning) await refuseLiveSource(sourceSql, source);
  // Both sides on the same migrations, so their tables and columns agree.
  await migrate(source, { logger, migrationsDir: options.migrationsDir });
  const target = await openDatabase({ databaseUrl: targetUrl, dataDir: '', logger, poolSize: 1 });
  try {
    await migrate(target, { logger, migrationsDir: options.migrationsDir });
  } finally {
    await target.close();
  }

  const client = new pg.Client({ connectionString: targetUrl });
  await client.connect().catch((err: Error) => {
    throw new DbCopyError(`cannot connect to ${where}: ${err.message}`);
  });
  try {
    const targetSql: SqlRunner = async (sql, params) => (await client.query(sql, params)).rows;
    const [sourceSchema, targetSchema] = await Promise.all([readSchema(sourceSql), readSchema(targetSql)]);
    await refuseNonEmpty(targetSql, targetSchema, where);

    await client.query('BEGIN');
    const tables: DbCopyResult['tables'] = [];
    for (const table of copyOrder(targetSchema)) {
      const columns = sharedColumns(table, sourceSchema.get(table.name));
      const rows = await copyTable(sourceSql, targetSql, table, columns, options.batchSize ?? 1000);
      await resetSequences(targetSql, table);
      tables.push({ table: table.name, rows });
      options.onTable?.(table.name, rows);
      logger.info({ table: table.name, rows }, 'table copied');
    }
    await client.query('COMMIT');
    return { tables };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await client.end();
  }
}

/** The source's place, as the admin set it: the data directory or the redacted URL. */
function sourcePlace(source: Database): string {
  return source.kind === 'embedded'
    ? `the embedded database in ${path.resolve(source.location)}`
    : source.location;
}

async function refuseEmptySource(sql: SqlRunner, source: Database): Promise<void> {
  const schema = await readSchema(sql);
  for (const name of schema.keys()) {
    const [row] = await sql(`SELECT EXISTS (SELECT 1 FROM ${quote(name)}) AS filled`);
    if (row?.filled === true) return;
  }
  throw new DbCopyError(
    `${sourcePlace(source)} holds no crm-sync data (every table is empty), so there is nothing to copy and nothing was created. ` +
      (source.kind === 'embedded'
        ? 'Set DATA_DIR to the directory the worker uses (the systemd unit sets DATA_DIR in the unit itself, not in the env file).'
        : 'Check that DATABASE_URL names the database the worker uses.'),
  );
}

/**
 * A worker using the source (a live leader lease, a running job) would go on changing it during
 * the copy, and its running jobs would arrive in the target as running: refused unless told.
 */
async function refuseLiveSource(sql: SqlRunner, source: Database): Promise<void> {
  const [row] = await sql(
    `SELECT (SELECT count(*) FROM leader_lease WHERE expires_at > now())::int AS leases,
            (SELECT count(*) FROM job WHERE state = 'running' AND locked_until > now())::int AS running`,
  );
  const leases = Number(row?.leases ?? 0);
  const running = Number(row?.running ?? 0);
  if (leases + running === 0) return;
  throw new DbCopyError(
    `a worker is using ${sourcePlace(source)} (${leases} live lease(s), ${running} running job(s)), so nothing was copied. ` +
      'Stop the worker first, or pass --while-running to copy anyway.',
  );
}

async function refuseNonEmpty(sql: SqlRunner, schema: Map<string, TableShape>, where: string): Promise<void> {
  const filled: string[] = [];
  for (const name of schema.keys()) {
    const [row] = await sql(`SELECT EXISTS (SELECT 1 FROM ${quote(name)}) AS filled`);
    if (row?.filled === true) filled.push(name);
  }
  if (filled.length > 0) {
    throw new DbCopyError(
      `the target database ${where} already holds crm-sync data (tables ${filled.join(', ')}); ` +
        'db copy only fills an empty database, so nothing was copied. Use a new database, or drop and recreate this one.',
    );
  }
}

/** The target's columns that the source has too; a source column the target lacks is an error. */
function sharedColumns(table: TableShape, source: TableShape | undefined): string[] {
  if (!source)
    throw new DbCopyError(`the source database has no table ${table.name}; run \`crm-sync migrate\``);
  const missing = source.columns.filter((c) => !table.columns.includes(c));
  if (missing.length > 0) {
    throw new DbCopyError(
      `table ${table.name}: the target lacks column(s) ${missing.join(', ')} that the source has; ` +
        'are both databases migrated by the same crm-sync version?',
    );
  }
  return table.columns.filter((c) => source.columns.includes(c));
}

async function copyTable(
  source: SqlRunner,
  target: SqlRunner,
  table: TableShape,
  columns: string[],
  batchSize: number,
): Promise<number> {
  const list = columns.map(quote).join(', ');
  // A stable order makes LIMIT/OFFSET batches cover every row once; without a primary key the
  // table is read in one piece instead.
  const order = table.primaryKey.length > 0 ? `ORDER BY ${table.primaryKey.map(quote).join(', ')}` : '';
  const limit = order ? batchSize : Number.MAX_SAFE_INTEGER;
  let copied = 0;
  for (;;) {
    const [batch] = await source(
      `SELECT count(*)::int AS n, coalesce(json_agg(t), '[]'::json)::text AS rows FROM ` +
        `(SELECT ${list} FROM ${quote(table.name)} ${order} LIMIT ${limit} OFFSET ${copied}) t`,
    );
    const n = Number(batch?.n ?? 0);
    if (n === 0) break;
    await target(
      `INSERT INTO ${quote(table.name)} (${list}) SELECT ${list} FROM json_populate_recordset(NULL::${quote(table.name)}, $1::json)`,
      [String(batch?.rows)],
    );
    copied += n;
    if (n < limit) break;
  }
  return copied;
}

/** Moves each serial/identity sequence past the copied ids, so new rows do not collide. */
async function resetSequences(sql: SqlRunner, table: TableShape): Promise<void> {
  for (const column of table.columns) {
    const [row] = await sql('SELECT pg_get_serial_sequence($1, $2) AS seq', [quote(table.name), column]);
    if (typeof row?.seq !== 'string') continue;
    await sql(
      `SELECT setval($1, coalesce((SELECT max(${quote(column)}) FROM ${quote(table.name)}), 0) + 1, false)`,
      [row.seq],
    );
  }
}

function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}
