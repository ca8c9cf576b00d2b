// PGlite and its Prisma adapter (~3 MB of RSS) are imported when an embedded database is used:
// a PostgreSQL worker never needs them.
import type { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import {
  DriverAdapterError,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
} from '@prisma/driver-adapter-utils';
import pg from 'pg';

/**
 * Driver adapters for the schema engine (src/store/schemaEngine.ts), each mending one quirk of
 * the stock adapter it wraps. The caller calls `dispose()` when the engine is done.
 */
export interface MigrationAdapter {
  factory: SqlMigrationAwareDriverAdapterFactory;
  dispose(): Promise<void>;
}

/**
 * PostgreSQL for deploy and status only. adapter-pg 7.10.1 builds its "shadow database" from an
 * unchanged connectionString, i.e. the main database, so shadow use is refused here.
 */
export function postgresMigrationAdapter(url: string): MigrationAdapter {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const inner = new PrismaPg(pool);
  const factory: SqlMigrationAwareDriverAdapterFactory = {
    provider: inner.provider,
    adapterName: inner.adapterName,
    connect: () => inner.connect(),
    connectToShadowDb: () =>
      Promise.reject(
        new Error('crm-sync does not use a PostgreSQL shadow database (see docs/persistence.md)'),
      ),
  };
  return { factory, dispose: () => pool.end() };
}

/** The embedded database itself (its one connection), with a shadow in memory when needed. */
export function embeddedMigrationAdapter(pglite: PGlite): MigrationAdapter {
  const shadows: PGlite[] = [];
  const factory: SqlMigrationAwareDriverAdapterFactory = {
    provider: 'postgres',
    adapterName: '@prisma/adapter-pglite',
    connect: () => connectPglite(pglite),
    connectToShadowDb: async () => {
      const { PGlite } = await import('@electric-sql/pglite');
      const shadow = await PGlite.create({ dataDir: 'memory://' });
      shadows.push(shadow);
      return connectPglite(shadow);
    },
  };
  return {
    factory,
    dispose: async () => {
      await Promise.all(shadows.splice(0).map((s) => s.close()));
    },
  };
}

/** A throwaway in-memory database, for diffs that need no real one (schema vs migrations). */
export async function scratchMigrationAdapter(): Promise<MigrationAdapter> {
  const { PGlite } = await import('@electric-sql/pglite');
  const pglite = await PGlite.create({ dataDir: 'memory://' });
  const inner = embeddedMigrationAdapter(pglite);
  return {
    factory: inner.factory,
    dispose: async () => {
      await inner.dispose();
      await pglite.close();
    },
  };
}

/**
 * pglite-prisma-adapter 0.7.2's executeScript does not await PGlite's exec, so a failing migration
 * is recorded as applied and its error escapes as an unhandled rejection. Awaited here.
 */
async function connectPglite(pglite: PGlite): Promise<SqlDriverAdapter> {
  const { PrismaPGlite } = await import('pglite-prisma-adapter');
  const adapter = await new PrismaPGlite(pglite).connect();
  adapter.executeScript = async (script: string) => {
    try {
      await pglite.exec(script);
    } catch (err) {
      throw toDriverError(err);
    }
  };
  return adapter;
}

function toDriverError(err: unknown): unknown {
  const e = err as { code?: unknown; message?: unknown; severity?: unknown; detail?: unknown };
  if (typeof e.code !== 'string' || typeof e.message !== 'string') return err;
  return new DriverAdapterError({
    kind: 'postgres',
    code: e.code,
    severity: typeof e.severity === 'string' ? e.severity : 'ERROR',
    message: e.message,
    detail: typeof e.detail === 'string' ? e.detail : undefined,
    column: undefined,
    hint: undefined,
  });
}
