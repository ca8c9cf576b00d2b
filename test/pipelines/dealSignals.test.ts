/**
 * Deal-level signals after a write-back batch (src/pipelines/dealSignals.ts), on a real database
 * and the real HubSpot adapter against its sandbox: written only when a newer call arrives, once
 * per change, kept due across a failure or a restart, and never retried after a refusal.
 */
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CrmAdapter } from '../../src/crm/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { loadMappings } from '../../src/mapping/index.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { flushDueDeals, syncDealSignals, type DealDeps } from '../../src/pipelines/dealSignals.js';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import type { Analysis, Call } from '../../src/service/types.js';
import {
  claimDueDeals,
  getDealLedger,
  moveDealCalls,
  recordDealCall,
  settleDeal,
} from '../../src/store/dealSignalRepo.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { adapterFor } from '../crm-hubspot/helpers.js';
import { DATABASE_KINDS, useMigratedDatabase } from '../store/helpers.js';

const T0 = Date.UTC(2026, 0, 5, 12);
const mapping = loadMappings(path.join(import.meta.dirname, '..', '..', 'config'), 'hubspot');
const UPDATE = 'POST /crm/objects/2026-09/deals/batch/update';

let hs: HubSpotSandbox;
let crm: CrmAdapter;
let deals: string[];
beforeAll(async () => {
  hs = await startHubSpotSandbox();
  crm = adapterFor(hs, { retry: { baseDelayMs: 1, maxAttempts: 1 } });
});
afterAll(() => hs.close());

let seq = 0;
/** A call and its analysis, started at `startedAt`, with a unique id. */
function written(dealId: string | undefined, startedAt: string, score: number, steps: string[] = []) {
  const id = `call_${String(++seq).padStart(4, '0')}`;
  const call = { id, status: 'analyzed', created_at: startedAt } as Call;
  const analysis = {
    call_id: id,
    scoring: { overall: score },
    objections: [{ type: 'price', text: 'too dear', handled: false }],
    next_steps: steps,
  } as Analysis;
  return { call, analysis, dealId };
}

const deal = (id: string) => hs.state.store.objects.deals.get(id)!.properties;
/** crmsync_deal_signal_writes_total{outcome} of these deps. */
async function outcomes(deps: DealDeps): Promise<Record<string, number>> {
  const { values } = await deps.metrics.dealSignalWrites.get();
  return Object.fromEntries(values.map((v) => [String(v.labels.outcome), v.value]));
}
/** A deal of its own for one test. */
const freshDeal = (name: string) => hs.state.store.create('deals', { dealname: name }).id;

describe.each(DATABASE_KINDS)('deal signals on %s', (kind) => {
  const current = useMigratedDatabase(kind);
  // Each database starts with a fresh portal: the deals carry no signals yet.
  beforeAll(() => {
    hs.state.reset({ withCustomProperties: true });
    deals = Object.values(hs.state.refs.deals);
  });
  let deps: DealDeps;
  let clock: FakeClock;
  beforeEach(() => {
    hs.state.requests.clear();
    hs.state.faults.clear();
    clock = new FakeClock(T0);
    deps = {
      db: current().db.prisma,
      crmName: 'hubspot',
      crm,
      mapping,
      clock,
      logger: silentLogger,
      metrics: createMetrics({ defaultMetrics: false }),
    };
  });

  it('writes the newest call’s values once per newer call; an older call, late or replayed, writes nothing', async () => {
    const dealId = deals[0]!;
    const older = written(dealId, '2026-01-01T09:00:00Z', 40, ['Send pricing']);
    const newer = written(dealId, '2026-01-03T09:00:00Z', 80, ['Book the pilot']);
    const newest = written(dealId, '2026-01-04T09:00:00Z', 90);

    await syncDealSignals(deps, [newer]);
    expect(hs.state.requests.count('POST', '/deals/batch/update')).toBe(1);
    await syncDealSignals(deps, [newest, older]); // one batch: the older call rides along
    expect(hs.state.requests.count('POST', '/deals/batch/update')).toBe(2);
    expect(deal(dealId)).toMatchObject({
      crmsync_last_call_date: '2026-01-04',
      crmsync_last_call_score: '90',
      crmsync_average_score: '70', // the newest 3: 90, 80, 40
      crmsync_open_objections: '3',
      crmsync_last_next_step: 'Book the pilot', // the newest call that named one
    });

    await syncDealSignals(deps, [older]);
    await syncDealSignals(deps, [newer]);
    expect(hs.state.requests.count('POST', '/deals/batch/update')).toBe(2);
    expect(deal(dealId).crmsync_last_call_score).toBe('90');
    expect(await getDealLedger(deps.db, 'hubspot', dealId)).toMatchObject({
      newestCallId: newest.call.id,
      writtenCallId: newest.call.id,
      lastError: null,
    });
    expect(await outcomes(deps)).toEqual({ written: 2 });
  });

  it('batches the deals of one write-back batch into one request', async () => {
    const a = written(deals[1], '2026-02-01T09:00:00Z', 50);
    const b = written(deals[2], '2026-02-01T10:00:00Z', 60);
    await syncDealSignals(deps, [a, b]);
    expect(hs.state.requests.byPath()[UPDATE]).toBe(1);
    expect(deal(deals[1]!).crmsync_last_call_score).toBe('50');
    expect(deal(deals[2]!).crmsync_last_call_score).toBe('60');
  });

  it('a batch HubSpot refuses as a whole goes deal by deal, so one bad deal holds back no other', async () => {
    const [good, other] = [freshDeal('Good'), freshDeal('Other')];
    hs.state.faults.add({ status: 400, match: '/deals/batch/update', count: 1 });
    await syncDealSignals(deps, [
      written(good, '2026-02-02T09:00:00Z', 71),
      written(other, '2026-02-02T09:00:00Z', 72),
    ]);
    expect(hs.state.requests.count('POST', '/deals/batch/update')).toBe(3);
    expect(deal(good).crmsync_last_call_score).toBe('71');
    expect(deal(other).crmsync_last_call_score).toBe('72');
  });

  it('a newer call that changes nothing the deal shows costs no request', async () => {
    const dealId = deals[3]!;
    await syncDealSignals(deps, [written(dealId, '2026-03-01T09:00:00Z', 70)]);
    hs.state.requests.clear();
    // Same day, same score, same objection: every field comes out the same.
    const same = written(dealId, '2026-03-01T15:00:00Z', 70);
    await syncDealSignals(deps, [{ ...same, analysis: { ...same.analysis, objections: [] } }]);
    expect(hs.state.requests.count('POST', '/deals/batch/update')).toBe(0);
    expect(await getDealLedger(deps.db, 'hubspot', dealId)).toMatchObject({ writtenCallId: same.call.id });
    expect(await outcomes(deps)).toEqual({ written: 1, unchanged: 1 });
  });

  it('a failed write leaves the deal due; the next flush, or a restarted process, writes it once', async () => {
    const dealId = deals[4]!;
    hs.state.faults.add({ status: 503, match: '/deals/batch/update', count: 1 });
    await syncDealSignals(deps, [written(dealId, '2026-04-01T09:00:00Z', 55)]);
    expect(deal(dealId).crmsync_last_call_score).toBeUndefined();
    expect(await outcomes(deps)).toEqual({ retry: 1 });
    expect(await getDealLedger(deps.db, 'hubspot', dealId)).toMatchObject({
      writtenCallId: null,
      lastError: expect.stringMatching(/503|unavailable|HubSpot/i),
    });

    // A new process (a fresh adapter, the same database) finds the deal due and writes it.
    const restarted = { ...deps, crm: adapterFor(hs, { retry: { baseDelayMs: 1, maxAttempts: 1 } }) };
    expect(await flushDueDeals(restarted)).toBe(1);
    expect(deal(dealId).crmsync_last_call_score).toBe('55');
    // ...once: after that nothing is due, so another restart sends nothing.
    expect(await flushDueDeals(restarted)).toBe(0);
    expect(hs.state.requests.count('POST', '/deals/batch/update')).toBe(2);
  });

  it('a deal the CRM refuses is not retried until a newer call arrives', async () => {
    const gone = '999999999';
    await syncDealSignals(deps, [written(gone, '2026-05-01T09:00:00Z', 50)]);
    expect(await getDealLedger(deps.db, 'hubspot', gone)).toMatchObject({
      lastError: expect.stringContaining(`did not update deal ${gone}`),
    });
    expect(await flushDueDeals(deps)).toBe(0);
    expect(hs.state.requests.count('POST', '/deals/batch/update')).toBe(1);
    expect(await outcomes(deps)).toEqual({ refused: 1 });
    // A newer call makes it due again.
    await syncDealSignals(deps, [written(gone, '2026-05-02T09:00:00Z', 60)]);
    expect(hs.state.requests.count('POST', '/deals/batch/update')).toBe(2);
  });

  it('a late older call counts in the averages from the deal’s next newer call on', async () => {
    const dealId = freshDeal('Late');
    await syncDealSignals(deps, [written(dealId, '2026-07-02T09:00:00Z', 80)]);
    await syncDealSignals(deps, [written(dealId, '2026-07-01T09:00:00Z', 20)]); // late: nothing sent
    expect(deal(dealId).crmsync_average_score).toBe('80');
    await syncDealSignals(deps, [written(dealId, '2026-07-03T09:00:00Z', 50)]);
    expect(deal(dealId)).toMatchObject({ crmsync_last_call_score: '50', crmsync_average_score: '50' });
  });

  it('calls that started at the same moment: the database and the aggregation agree on the newest', async () => {
    const dealId = freshDeal('Tie');
    const at = '2026-10-01T09:00:00Z';
    if (kind === 'postgres') {
      // A database whose text sorts by a locale (PGlite and the CI database sort byte-wise).
      const [icu] = await deps.db.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_collation WHERE collname = 'und-x-icu'`;
      if (icu?.n) {
        await deps.db.$executeRawUnsafe(
          'ALTER TABLE deal_signal ALTER COLUMN newest_call_id TYPE text COLLATE "und-x-icu"',
        );
      }
    }
    // Upper case sorts before lower case byte-wise, after it in most locales' collations.
    const ids = ['call_tie_a', 'call_tie_B'];
    for (const [i, id] of ids.entries()) {
      const w = written(dealId, at, 40 + i);
      await syncDealSignals(deps, [{ ...w, call: { ...w.call, id } }]);
    }
    const ledger = await getDealLedger(deps.db, 'hubspot', dealId);
    expect(ledger).toMatchObject({ newestCallId: 'call_tie_a', writtenCallId: 'call_tie_a' });
    expect(await flushDueDeals(deps)).toBe(0);
  });

  it('calls that rematch moves take their signals along: both deals are written again', async () => {
    const [from, to] = [freshDeal('From'), freshDeal('To')];
    const older = written(from, '2026-11-01T09:00:00Z', 30, ['Send pricing']);
    const newer = written(from, '2026-11-02T09:00:00Z', 90);
    await syncDealSignals(deps, [older, newer]);
    expect(deal(from).crmsync_last_call_score).toBe('90');

    await moveDealCalls(deps.db, {
      crm: 'hubspot',
      moves: [{ callId: newer.call.id, dealId: to }],
      now: new Date(clock.now()),
    });
    expect(await flushDueDeals(deps)).toBe(2);
    expect(deal(from)).toMatchObject({
      crmsync_last_call_score: '30',
      crmsync_last_next_step: 'Send pricing',
    });
    expect(deal(to)).toMatchObject({ crmsync_last_call_score: '90', crmsync_average_score: '90' });
    expect(await flushDueDeals(deps)).toBe(0);

    // A call moved off every deal: the deal it left, now without calls, gets its fields cleared.
    await moveDealCalls(deps.db, {
      crm: 'hubspot',
      moves: [{ callId: older.call.id, dealId: null }],
      now: new Date(clock.now()),
    });
    expect(await flushDueDeals(deps)).toBe(1);
    // HubSpot clears a property sent as "" (the sandbox keeps it unset).
    for (const name of ['crmsync_last_call_score', 'crmsync_last_next_step', 'crmsync_last_call_date']) {
      expect(deal(from)[name] || undefined, name).toBeUndefined();
    }
    expect(await flushDueDeals(deps)).toBe(0);
    // Moving a call to the deal it is on changes nothing.
    await moveDealCalls(deps.db, {
      crm: 'hubspot',
      moves: [{ callId: newer.call.id, dealId: to }],
      now: new Date(clock.now()),
    });
    expect(await flushDueDeals(deps)).toBe(0);
  });

  it('a call written again on another deal leaves the old one, which is written again', async () => {
    const [first, second] = [freshDeal('First'), freshDeal('Second')];
    const older = written(first, '2026-12-01T09:00:00Z', 20);
    const call = written(first, '2026-12-02T09:00:00Z', 80);
    await syncDealSignals(deps, [older, call]);
    expect(deal(first).crmsync_last_call_score).toBe('80');
    await syncDealSignals(deps, [{ ...call, dealId: second }]);
    expect(deal(first).crmsync_last_call_score).toBe('20');
    expect(deal(second).crmsync_last_call_score).toBe('80');
  });

  it('a call without a deal is not recorded', async () => {
    const before = await deps.db.dealCall.count();
    await syncDealSignals(deps, [written(undefined, '2026-08-01T09:00:00Z', 50)]);
    expect(await deps.db.dealCall.count()).toBe(before);
    expect(hs.state.requests.count('POST', '/deals/batch/update')).toBe(0);
  });

  it('a claim keeps other processes off the deal until it runs out', async () => {
    const dealId = deals[5]!;
    const now = new Date(clock.now());
    const w = written(dealId, '2026-06-01T09:00:00Z', 50);
    await recordDealCall(deps.db, {
      crm: 'hubspot',
      dealId,
      facts: {
        callId: w.call.id,
        startedAt: Date.parse(w.call.created_at),
        overallScore: 50,
        objectionsDetected: 0,
        objectionsHandled: 0,
        nextSteps: [],
      },
      now,
    });
    const until = new Date(clock.now() + 60_000);
    const first = await claimDueDeals(deps.db, { crm: 'hubspot', now, until, limit: 100 });
    expect(first.map((d) => d.dealId)).toContain(dealId);
    expect(await claimDueDeals(deps.db, { crm: 'hubspot', now, until, limit: 100 })).toEqual([]);
    // The first process died mid-write: after its claim runs out, the deal is taken again.
    const later = new Date(clock.now() + 61_000);
    const again = await claimDueDeals(deps.db, { crm: 'hubspot', now: later, until: later, limit: 100 });
    expect(again.find((d) => d.dealId === dealId)).toMatchObject({ recovered: true });
    expect(first.find((d) => d.dealId === dealId)).toMatchObject({ recovered: false });
    // Leave nothing claimed for the tests after this one.
    for (const d of again)
      await settleDeal(deps.db, { crm: 'hubspot', dealId: d.dealId, callId: d.newestCallId, now: later });
  });

  it('a process that died mid-write: the next one reads the deal and writes only what is not there', async () => {
    const [landed, lost] = [freshDeal('Landed'), freshDeal('Lost')];
    const claimMs = 5 * 60_000;
    // The dead process recorded both calls, claimed both deals, and got one write out.
    for (const [dealId, score] of [
      [landed, 61],
      [lost, 62],
    ] as const) {
      const w = written(dealId, '2026-09-01T09:00:00Z', score);
      await recordDealCall(deps.db, {
        crm: 'hubspot',
        dealId,
        facts: {
          callId: w.call.id,
          startedAt: Date.parse(w.call.created_at),
          overallScore: score,
          objectionsDetected: 1,
          objectionsHandled: 0,
          nextSteps: [],
        },
        now: new Date(clock.now()),
      });
    }
    const now = new Date(clock.now());
    const claimed = await claimDueDeals(deps.db, {
      crm: 'hubspot',
      now,
      until: new Date(+now + claimMs),
      limit: 100,
    });
    expect(claimed.map((d) => d.dealId).sort()).toEqual([landed, lost].sort());
    await crm.updateDeals([
      {
        dealId: landed,
        properties: {
          crmsync_last_call_date: '2026-09-01',
          crmsync_last_call_score: 61,
          crmsync_average_score: 61,
          crmsync_open_objections: 1,
          crmsync_last_next_step: null,
        },
      },
    ]);
    hs.state.requests.clear();

    // Before its claim runs out nobody touches the deals; after, the next process reads them.
    expect(await flushDueDeals(deps)).toBe(0);
    await clock.advance(claimMs + 1);
    expect(await flushDueDeals(deps)).toBe(1);
    expect(hs.state.requests.byPath()).toEqual({
      'POST /crm/objects/2026-09/deals/batch/read': 1,
      [UPDATE]: 1,
    });
    expect(deal(lost).crmsync_last_call_score).toBe('62');
    for (const dealId of [landed, lost]) {
      expect(await getDealLedger(deps.db, 'hubspot', dealId)).toMatchObject({
        writtenValues: expect.objectContaining({ crmsync_last_call_score: dealId === landed ? 61 : 62 }),
        lastError: null,
      });
    }
  });

  it('records and writes nothing while the section is off', async () => {
    const off = { ...deps, mapping: { ...mapping, deal: { ...mapping.deal!, enabled: false } } };
    const dealId = freshDeal('Off');
    const before = await getDealLedger(deps.db, 'hubspot', dealId);
    await syncDealSignals(off, [written(dealId, '2027-01-01T09:00:00Z', 10)]);
    expect(await getDealLedger(deps.db, 'hubspot', dealId)).toEqual(before);
    expect(hs.state.requests.count('POST', '/deals/batch/update')).toBe(0);
  });
});
