/**
 * Whether a call's deal signals reached the CRM, as `status --call` shows it: built with the
 * deal store's own steps (record, settle, release) on a real database.
 */
import { describe, expect, it } from 'vitest';
import { formatCall } from '../../src/cli/statusFormat.js';
import type { DealCallFacts } from '../../src/deals/aggregate.js';
import { callDealSignals, recordDealCalls, releaseDeal, settleDeal } from '../../src/store/dealSignalRepo.js';
import { upsertDiscovered } from '../../src/store/syncStatus/discovered.js';
import { loadCallView } from '../../src/worker/callView.js';
import { DATABASE_KINDS, useMigratedDatabase } from './helpers.js';

const crm = 'hubspot' as const;
const now = new Date(Date.UTC(2026, 0, 5, 12));

function facts(callId: string, hour: number): DealCallFacts {
  return {
    callId,
    startedAt: Date.UTC(2026, 0, 5, hour),
    overallScore: 70,
    objectionsDetected: 1,
    objectionsHandled: 0,
    nextSteps: ['send pricing'],
  };
}

describe.each(DATABASE_KINDS)('callDealSignals (%s)', (kind) => {
  const get = useMigratedDatabase(kind);

  it('is null for a call on no deal, and due until a write covers it', async () => {
    const db = get().db.prisma;
    expect(await callDealSignals(db, crm, 'nowhere')).toBeNull();
    await recordDealCalls(db, { crm, calls: [{ dealId: 'D1', facts: facts('a', 9) }], now });
    expect(await callDealSignals(db, crm, 'a')).toMatchObject({
      dealId: 'D1',
      state: 'due',
      lastError: null,
    });

    await releaseDeal(db, { crm, dealId: 'D1', error: 'HUBSPOT_429: slow down', now });
    expect(await callDealSignals(db, crm, 'a')).toMatchObject({
      state: 'due',
      lastError: 'HUBSPOT_429: slow down',
    });
  });

  it('is written for the covered call and older ones, due for a newer one, refused when refused', async () => {
    const db = get().db.prisma;
    await recordDealCalls(db, { crm, calls: [{ dealId: 'D2', facts: facts('b1', 9) }], now });
    await recordDealCalls(db, { crm, calls: [{ dealId: 'D2', facts: facts('b2', 10) }], now });
    await settleDeal(db, { crm, dealId: 'D2', callId: 'b2', values: { score: 70 }, now });
    expect(await callDealSignals(db, crm, 'b2')).toMatchObject({ state: 'written', writtenCallId: 'b2' });
    expect(await callDealSignals(db, crm, 'b1')).toMatchObject({ state: 'written', writtenAt: now });

    // A newer call arrives and its try fails: it is due, the older ones stay written.
    await recordDealCalls(db, { crm, calls: [{ dealId: 'D2', facts: facts('b3', 11) }], now });
    await releaseDeal(db, { crm, dealId: 'D2', error: 'HUBSPOT_500: boom', now });
    expect(await callDealSignals(db, crm, 'b3')).toMatchObject({
      state: 'due',
      lastError: 'HUBSPOT_500: boom',
    });
    expect(await callDealSignals(db, crm, 'b2')).toMatchObject({ state: 'written' });

    await settleDeal(db, { crm, dealId: 'D2', callId: 'b3', error: 'PROPERTY_DOESNT_EXIST: score', now });
    expect(await callDealSignals(db, crm, 'b3')).toMatchObject({ state: 'refused' });
  });

  it('reaches status --call', async () => {
    const db = get().db.prisma;
    await upsertDiscovered(db, { callId: 'c1', crm, now });
    const asJson = (v: unknown) => JSON.parse(JSON.stringify(v)) as Parameters<typeof formatCall>[0];
    expect(formatCall(asJson(await loadCallView(db, crm, 'c1')))).toContain('Deal signals\n(not on a deal');

    await recordDealCalls(db, { crm, calls: [{ dealId: 'D3', facts: facts('c1', 9) }], now });
    await settleDeal(db, { crm, dealId: 'D3', callId: 'c1', values: { score: 70 }, now });
    const view = await loadCallView(db, crm, 'c1');
    // The worker's /admin/calls/:id answer is this view as JSON.
    const text = formatCall(asJson(view));
    expect(text).toContain(
      'Deal signals\nwritten to deal D3 by the write for call c1 at 2026-01-05T12:00:00.000Z',
    );
  });
});
