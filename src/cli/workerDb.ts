/**
 * Opens the database for a one-shot CLI command. When the embedded database is held by a running
 * worker, returns null so the command can ask that worker over its loopback HTTP API instead.
 */
import type { AppConfig } from '../config/config.js';
import type { RefreshTokenStore } from '../crm/refreshTokens.js';
import { SetupError } from '../config/setupError.js';
import { openDatabase, type Database } from '../store/database.js';
import { EmbeddedDatabaseInUseError } from '../store/embeddedLock.js';
import { allApplied, readMigrations } from '../store/migrations.js';

export async function openDatabaseOrWorker(
  config: AppConfig,
  options: { mustExist?: boolean | undefined } = {},
): Promise<Database | null> {
  let db: Database;
  try {
    // A command that only reads never creates a database (a wrong DATA_DIR must not leave one behind).
    db = await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      existing: options.mustExist,
    });
  } catch (err) {
    if (err instanceof EmbeddedDatabaseInUseError) return null;
    throw err;
  }
  // Nor does it migrate one: a database behind this version would fail mid-read on a missing column.
  if (options.mustExist && !(await allApplied(db, readMigrations()))) {
    await db.close();
    throw new SetupError(
      `The database at ${db.location} does not have this version's migrations applied.`,
      '`crm-sync migrate --status` lists them; `crm-sync migrate` (or starting the worker) applies them, then run this again.',
    );
  }
  return db;
}

/** Calls the running worker's loopback API (PORT from the config), with ADMIN_TOKEN when set. */
export async function askWorker<T>(config: AppConfig, path: string, body?: unknown): Promise<T> {
  const url = `http://127.0.0.1:${config.http.port}${path}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(config.http.adminToken ? { authorization: `Bearer ${config.http.adminToken}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new Error(
      `the embedded database is in use by another process, and no worker answers on ${url}; ` +
        'stop the other crm-sync process or set PORT to the running worker',
    );
  }
  if (res.status === 401 || res.status === 403) {
    throw new Error(
      `the worker refused ${path} (${res.status}): set ADMIN_TOKEN to the worker's admin token`,
    );
  }
  if (!res.ok) throw new Error(`the worker answered ${res.status} for ${path}: ${await res.text()}`);
  return (await res.json()) as T;
}

/**
 * The shared refresh-token store a CLI command's CRM adapter must use (see
 * src/store/crmCredentialStore.ts), with the database it opened; undefined when the configuration
 * needs none. Throws when the running worker holds the embedded database: presenting the
 * configured token instead could retire the one the worker was handed.
 */
export async function openRefreshTokens(
  config: AppConfig,
): Promise<{ refreshTokens: RefreshTokenStore; close(): Promise<void> } | undefined> {
  const { refreshTokensFor } = await import('../store/crmCredentialStore.js');
  if (!refreshTokensFor(config, null)) return undefined;
  const database = await openDatabaseOrWorker(config);
  if (!database) {
    throw new Error(
      'the running worker holds the embedded database, and with it the refresh token Salesforce rotates: stop the worker for this command, or run both on PostgreSQL (DATABASE_URL)',
    );
  }
  // Like doctor's database check, a CLI command migrates nothing: the worker (or `crm-sync migrate`) does.
  const [table] = await database.prisma.$queryRaw<{ found: string | null }[]>`
    SELECT to_regclass('crm_credential')::text AS found`;
  if (!table?.found) {
    await database.close();
    throw new Error(
      'the database has no crm_credential table yet (it holds the refresh token the CRM rotates): run "crm-sync migrate", or start the worker once, then run this command again',
    );
  }
  return { refreshTokens: refreshTokensFor(config, database.prisma)!, close: () => database.close() };
}
