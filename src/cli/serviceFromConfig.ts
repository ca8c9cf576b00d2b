import { createRequestBudget } from '../budget/index.js';
import type { RequestBudget, SlotLedger } from '../budget/types.js';
import type { AppConfig } from '../config/config.js';
import { silentLogger, type Logger } from '../log/logger.js';
import { createServiceClient } from '../service/index.js';
import type { ServiceClient } from '../service/types.js';
import type { Database } from '../store/database.js';
import { systemClock, type Clock } from '../util/clock.js';

export interface OneShotService {
  client: ServiceClient;
  budget: RequestBudget;
  /** 'shared': counted in the database's ledger with the workers'; 'process': this process only. */
  budgetScope: 'shared' | 'process';
  /** Closes the client, then the budget, then the database it opened. */
  close(): Promise<void>;
}

export interface OneShotServiceOptions {
  clock?: Clock | undefined;
  logger?: Logger | undefined;
  /** Attempts per request, the first included (default: the client's, 5). */
  maxAttempts?: number | undefined;
  /** Told, in one line, when the requests cannot be counted in the shared budget (default stderr). */
  note?: ((line: string) => void) | undefined;
}

/**
 * A Service client for one-shot CLI commands (`doctor`, `mappings preview`), paid from the same
 * database ledger as the workers when the configured database has one: counted against the daily
 * cap and kept within the burst and minute limits beside a worker already at them. Opening reads
 * only: it never creates or migrates a database. When there is no such ledger (no database yet,
 * or the embedded one held by a running worker) the budget is this process's own, and `note` says
 * so; a worker on the same key still honours any 429 the Service answers.
 */
export async function openServiceFromConfig(
  config: AppConfig,
  options: OneShotServiceOptions = {},
): Promise<OneShotService> {
  const clock = options.clock ?? systemClock;
  const shared = await openSharedLedger(config);
  if ('unavailable' in shared) {
    (options.note ?? ((line) => process.stderr.write(`${line}\n`)))(
      `note: this command's Service requests are not counted in the workers' shared budget: ${shared.unavailable}`,
    );
  }
  const budget = createRequestBudget({
    limits: config.service.limits,
    clock,
    ...('ledger' in shared && { ledger: shared.ledger }),
    liveWindowReserve: config.service.liveWindowReserve,
    liveDailyReserve: config.service.liveDailyReserve,
    // Pacing spreads a worker's steady stream over the minute; a command's few requests
    // would only wait for it (a second apiece on the sales plan).
    paceLowerPriorities: false,
    logger: options.logger,
  });
  const client = createServiceClient({
    baseUrl: config.service.baseUrl,
    apiKey: config.service.apiKey,
    budget,
    clock,
    logger: options.logger ?? silentLogger,
    timeoutMs: config.service.requestTimeoutMs,
    maxAttempts: options.maxAttempts,
  });
  return {
    client,
    budget,
    budgetScope: 'ledger' in shared ? 'shared' : 'process',
    async close() {
      await client.close();
      await budget.close();
      if ('database' in shared) await shared.database.close();
    },
  };
}

type SharedLedger = { ledger: SlotLedger; database: Database } | { unavailable: string };

/** The workers' ledger in the configured database, or why it cannot be used (one clause). */
async function openSharedLedger(config: AppConfig): Promise<SharedLedger> {
  const embedded = config.databaseUrl === undefined;
  const [{ openDatabase, embeddedExists }, { EmbeddedDatabaseInUseError }, { createDbSlotLedger }] =
    await Promise.all([
      import('../store/database.js'),
      import('../store/embeddedLock.js'),
      import('../store/dbSlotLedger.js'),
    ]);
  // An embedded data directory without a database stays that way: a check creates nothing.
  if (embedded && !embeddedExists(config.dataDir)) {
    return { unavailable: `no database in DATA_DIR (${config.dataDir}) and no DATABASE_URL` };
  }
  let database: Database;
  try {
    database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  } catch (err) {
    if (err instanceof EmbeddedDatabaseInUseError) {
      return {
        unavailable:
          'the embedded database belongs to the running worker (run both on DATABASE_URL to share it)',
      };
    }
    return {
      unavailable: `the database did not open (${embedded ? 'DATA_DIR' : 'DATABASE_URL'}; see crm-sync doctor)`,
    };
  }
  const [row] = await database.prisma.$queryRaw<{ ready: boolean }[]>`
    SELECT to_regclass('budget_ledger') IS NOT NULL AND to_regclass('budget_request') IS NOT NULL
       AND to_regclass('budget_pause') IS NOT NULL AS ready`;
  if (row?.ready !== true) {
    await database.close();
    return {
      unavailable:
        'the database has no crm-sync tables yet (crm-sync start or crm-sync migrate creates them)',
    };
  }
  return { ledger: createDbSlotLedger({ db: database.prisma }), database };
}
