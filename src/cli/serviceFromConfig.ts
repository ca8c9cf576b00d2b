import { createRequestBudget } from '../budget/index.js';
import type { RequestBudget } from '../budget/types.js';
import type { AppConfig } from '../config/config.js';
import { silentLogger, type Logger } from '../log/logger.js';
import { createServiceClient } from '../service/index.js';
import type { ServiceClient } from '../service/types.js';
import { systemClock, type Clock } from '../util/clock.js';

export interface OneShotService {
  client: ServiceClient;
  budget: RequestBudget;
  /** Closes the client, then the budget. */
  close(): Promise<void>;
}

export interface OneShotServiceOptions {
  clock?: Clock | undefined;
  logger?: Logger | undefined;
  /** Attempts per request, the first included (default: the client's, 5). */
  maxAttempts?: number | undefined;
}

/**
 * A Service client for one-shot CLI commands (`doctor`, `mappings preview`), paid from a budget
 * of its own process. Such a command makes a handful of requests; if a worker runs on the same
 * key at that moment, its shared budget still honours any 429 the Service answers.
 */
export function createServiceFromConfig(
  config: AppConfig,
  options: OneShotServiceOptions = {},
): OneShotService {
  const clock = options.clock ?? systemClock;
  const budget = createRequestBudget({
    limits: config.service.limits,
    clock,
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
    async close() {
      await client.close();
      await budget.close();
    },
  };
}
