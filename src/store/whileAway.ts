/**
 * Bookkeeping that must not be dropped when the database is briefly away (a job's result, a
 * follow-up claim to undo): tried again 1 s, 2 s, ... apart (at most 5 s), 15 times in all, about
 * a minute, the job claim lease, after which a lapsed lease hands the work back anyway. Only for
 * writes that are safe to repeat. Data the database refuses (refusedData), and a write fenced off
 * because its run lost its lease (LeaseLostError), are not tried again.
 */
import type { Logger } from '../log/logger.js';
import { sleep, type Clock } from '../util/clock.js';
import { LeaseLostError } from './fence.js';
import { refusedData } from './refusedData.js';

export const WHILE_AWAY = { attempts: 15, stepMs: 1_000, capMs: 5_000 } as const;

export async function retryWhileDatabaseAway<T>(
  deps: { clock: Clock; logger: Logger },
  what: string,
  write: () => Promise<T>,
  options: { giveUp?: () => boolean; context?: Record<string, unknown> } = {},
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      const final = refusedData(err) || err instanceof LeaseLostError;
      if (attempt >= WHILE_AWAY.attempts || final || options.giveUp?.()) throw err;
      deps.logger.warn({ err, ...options.context }, `could not ${what}; trying again`);
      await sleep(deps.clock, Math.min(WHILE_AWAY.stepMs * attempt, WHILE_AWAY.capMs));
    }
  }
}
