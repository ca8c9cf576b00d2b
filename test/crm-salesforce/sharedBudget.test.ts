/**
 * The org's daily API allocation is per org (issue 22, defect 4): two adapters (two replicas)
 * counting it in one database ledger stop together at the reserve, however many requests each
 * has in flight, through the real jsforce against the Salesforce sandbox.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrmDailyLimitError } from '../../src/crm/errors.js';
import { createSalesforceAdapter } from '../../src/crm/salesforce/index.js';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { createDbCrmLedger } from '../../src/store/crmSlotLedger.js';
import { systemClock } from '../../src/util/clock.js';
import { DATABASE_KINDS, useMigratedDatabase } from '../store/helpers.js';
import { sandboxConfig } from './helpers.js';

const LIMIT = 120;
const RESERVE = 20;

describe.each(DATABASE_KINDS)('two adapters sharing the org allocation (%s)', (kind) => {
  const get = useMigratedDatabase(kind);
  let sf: SalesforceSandbox;
  beforeAll(async () => {
    sf = await startSalesforceSandbox({ apiLimit: LIMIT });
  });
  afterAll(() => sf.close());

  it('stop at the reserve together, counting what is in flight', async () => {
    const replicas = [0, 1].map(() =>
      createSalesforceAdapter({
        config: sandboxConfig(sf),
        budget: { reserveMin: RESERVE, reserveFraction: 0, pauseMs: 60_000 },
        ledger: createDbCrmLedger({ db: get().db.prisma, ledger: 'salesforce', clock: systemClock }),
      }),
    );
    const refused: unknown[] = [];
    // Rounds of 12 reads at once from each, until both are held.
    for (let round = 0; round < 20 && refused.length < 24; round++) {
      refused.length = 0;
      const outcomes = await Promise.all(
        replicas.flatMap((r) =>
          Array.from({ length: 12 }, () =>
            r.checkCredentials().then(
              () => null,
              (e: unknown) => e,
            ),
          ),
        ),
      );
      for (const o of outcomes) if (o !== null) refused.push(o);
    }
    expect(refused).toHaveLength(24);
    for (const e of refused) expect(e).toBeInstanceOf(CrmDailyLimitError);
    // Every request sent was within the allocation less the reserve.
    expect(sf.state.apiUsed).toBeLessThanOrEqual(LIMIT - RESERVE);
    // ...and not far under it: a report is taken down by what may have been in flight when it was
    // made (24 at once), so the estimate runs ahead of the org's count by a round or two at most.
    expect(sf.state.apiUsed).toBeGreaterThan(LIMIT - RESERVE - 2 * 24);
  });
});
