import { Connection } from 'jsforce';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/logger.js';
import type { SalesforceContext } from '../../src/crm/salesforce/context.js';
import { DescribeCache } from '../../src/crm/salesforce/describe.js';
import { soqlString } from '../../src/crm/salesforce/soql.js';
import { firstRowsPer, type BatchQuery } from '../../src/crm/salesforce/soqlBatch.js';
import { ControlledTransport } from '../../src/crm/salesforce/transport.js';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { testJwtKeys } from './helpers.js';
import { populate } from './population.js';

let sb: SalesforceSandbox;
let ctx: SalesforceContext;

beforeAll(async () => {
  sb = await startSalesforceSandbox({ jwtKeys: testJwtKeys(), apiLimit: 1_000_000 });
  populate(sb);
  const conn = new Connection({ instanceUrl: sb.url, accessToken: sb.accessToken, version: '62.0' });
  conn._transport = new ControlledTransport({
    timeoutMs: 10_000,
    sdkRetries: false,
    proxyFor: () => undefined,
  });
  ctx = {
    conn,
    call: (_label, fn) => fn(),
    describe: new DescribeCache(() => Promise.reject(new Error('not used'))),
    logger: silentLogger,
  };
});
afterAll(async () => {
  await sb.close();
});

/** Open opportunities per account, grouped by account, so the first rows read are few accounts'. */
function oppQuery(need: number): BatchQuery {
  return {
    label: 'open opportunities',
    soql: (terms) =>
      `SELECT Id, AccountId, CloseDate FROM Opportunity WHERE AccountId IN (${terms}) AND IsClosed = false ` +
      'ORDER BY AccountId DESC, CloseDate ASC NULLS LAST, LastModifiedDate DESC',
    joiner: ', ',
    matches: (row, id) => row.AccountId === id,
    need,
  };
}

describe('firstRowsPer', () => {
  it('asks again, in later queries, for the values a cut-short result left without enough rows', async () => {
    // Twelve accounts with six open opportunities each, and three with none.
    const accounts = sb.state.store
      .all('Account')
      .filter((a) => /^Gen Co \d*[05]$|^Named Co [0-2]$/.test(String(a.Name)))
      .map((a) => a.Id);
    expect(accounts).toHaveLength(15);
    const terms = accounts.map((id) => ({ key: id, term: soqlString(id) }));
    const whole = await firstRowsPer(ctx, oppQuery(3), terms);
    expect([...whole.values()].map((rows) => rows.length).sort()).toEqual([
      ...Array<number>(3).fill(0),
      ...Array<number>(12).fill(3),
    ]);
    const before = sb.state.count({ pathContains: '/query' });
    // At most 3 × 5 rows read per query of 5 accounts: the first account's six rows crowd out
    // the later accounts, which are asked again.
    const cut = await firstRowsPer(ctx, oppQuery(3), terms, { maxTerms: 5, minFetch: 1 });
    const asked = sb.state.count({ pathContains: '/query' }) - before;
    expect(cut).toEqual(whole);
    expect(asked).toBeGreaterThan(3);
  });

  it('refuses rows that match none of the values instead of asking forever', async () => {
    const query = { ...oppQuery(1), matches: () => false };
    const [first] = sb.state.store.all('Account');
    await expect(
      firstRowsPer(ctx, query, [{ key: first!.Id, term: soqlString(first!.Id) }], { minFetch: 1 }),
    ).rejects.toThrow(/match none/);
  });
});
