/**
 * Databases for the benchmarks: a fresh embedded one in a temp dir, and a scratch PostgreSQL
 * database (crm_sync_bench_<random>) created on DATABASE_URL / TEST_DATABASE_URL, else on
 * postgresql://postgres@127.0.0.1:5432/test when it answers, and dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { tempDir } from './harness.js';

export const DEFAULT_PG = 'postgresql://postgres@127.0.0.1:5432/test';

export interface BenchDatabase {
  name: 'embedded' | 'PostgreSQL';
  /** Settings for openDatabase / the worker. */
  dataDir: string;
  databaseUrl?: string | undefined;
  drop(): Promise<void>;
}

export function embeddedDatabase(): BenchDatabase {
  const dir = tempDir('crm-sync-bench-db-');
  return { name: 'embedded', dataDir: dir.dir, drop: async () => dir.remove() };
}

/** A scratch PostgreSQL database, or null (with the reason) when no server answers. */
export async function scratchPostgres(): Promise<BenchDatabase | { skipped: string }> {
  const explicit = process.env.DATABASE_URL?.trim() || process.env.TEST_DATABASE_URL?.trim();
  const adminUrl = explicit || DEFAULT_PG;
  const name = `crm_sync_bench_${randomBytes(4).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 2_000 });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  try {
    await admin(`CREATE DATABASE ${name}`);
  } catch (err) {
    if (explicit) throw err;
    return { skipped: `no PostgreSQL at ${DEFAULT_PG} (${(err as Error).message})` };
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const dir = tempDir('crm-sync-bench-pg-');
  return {
    name: 'PostgreSQL',
    dataDir: dir.dir,
    databaseUrl: url.toString(),
    drop: async () => {
      dir.remove();
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
