import { createLogger } from '../../../src/log/logger.js';
import { createServiceClient } from '../../../src/service/client.js';
import type { ServiceClient, ServiceClientDeps } from '../../../src/service/types.js';
import type { Clock } from '../../../src/util/clock.js';
import { InstantClock } from './instantClock.js';
import { PassThroughBudget } from './passThroughBudget.js';

export const TEST_KEY = 'sk_test_6d1f0c3b9a_do_not_log';

export interface ClientFixture {
  client: ServiceClient;
  budget: PassThroughBudget;
  clock: Clock;
  /** Every log line written, as raw JSON text (to search for secrets). */
  logLines: string[];
}

/** A client with a recording budget, an instant clock (waits recorded, not spent) and a captured debug log. */
export function makeClient(
  baseUrl: string,
  over: Partial<ServiceClientDeps> = {},
): ClientFixture & { clock: InstantClock } {
  const budget = new PassThroughBudget();
  const clock = new InstantClock();
  const logLines: string[] = [];
  const logger = createLogger({ level: 'debug' }, { write: (line: string) => void logLines.push(line) });
  const client = createServiceClient({
    baseUrl,
    apiKey: TEST_KEY,
    budget,
    clock,
    logger,
    random: () => 0,
    timeoutMs: 2_000,
    ...over,
  });
  return { client, budget, clock, logLines };
}

/** Resolves with what `promise` rejected with; fails if it resolved. */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}
