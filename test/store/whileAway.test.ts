import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/logger.js';
import { refusedData } from '../../src/store/refusedData.js';
import { retryWhileDatabaseAway } from '../../src/store/whileAway.js';
import { FakeClock } from '../../src/util/fakeClock.js';

/** An error as Prisma's driver adapters raise it for the server's SQLSTATE `code`. */
const dbError = (code: string) =>
  Object.assign(new Error(`database said ${code}`), {
    code: 'P2010',
    meta: { driverAdapterError: { cause: { kind: 'postgres', code } } },
  });

describe('bookkeeping written while the database is away', () => {
  it('tells data the database refuses from a database that is away', () => {
    expect(refusedData(dbError('22021'))).toBe(true); // NUL in text
    expect(refusedData(dbError('23505'))).toBe(true); // unique violation
    expect(refusedData(dbError('57P01'))).toBe(false); // admin shutdown
    expect(refusedData(new Error('connect ECONNREFUSED 127.0.0.1:5432'))).toBe(false);
    expect(refusedData(null)).toBe(false);
  });

  it('tries a write again while the database is away, but not data it refused', async () => {
    const clock = new FakeClock(0);
    const deps = { clock, logger: silentLogger };
    let tries = 0;
    const refused = retryWhileDatabaseAway(deps, 'save', () => {
      tries++;
      return Promise.reject(dbError('22021'));
    });
    await expect(refused).rejects.toThrow('22021');
    expect(tries).toBe(1);

    let away = 2;
    const saved = retryWhileDatabaseAway(deps, 'save', async () => {
      if (away-- > 0) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      return 'saved';
    });
    let result: string | undefined;
    void saved.then((r) => (result = r));
    while (result === undefined) await clock.advance(1_000);
    expect(result).toBe('saved');
    expect(away).toBe(-1);
  });
});
