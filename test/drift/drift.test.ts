/**
 * Each silence/drift condition, created in a real database with the stores the worker uses, is
 * raised by the periodic check (a warn line, the gauge at 1) and cleared when it ends.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DRIFT_THRESHOLDS,
  type DriftCondition,
  type DriftThresholds,
} from '../../src/config/drift.js';
import { detectDrift } from '../../src/drift/detectors.js';
import { readDriftFacts } from '../../src/drift/facts.js';
import { createDriftMonitor } from '../../src/drift/monitor.js';
import { createLogger } from '../../src/log/logger.js';
import type { Db } from '../../src/store/database.js';
import { transitionSyncStatus, upsertDiscovered } from '../../src/store/syncStatusRepo.js';
import { insertWebhookOnce } from '../../src/store/webhookInboxRepo.js';
import { noMatchReason } from '../../src/sync/skipReasons.js';
import type { SyncState } from '../../src/sync/states.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { useMigratedDatabase } from '../store/helpers.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const crm = 'hubspot' as const;
const T: DriftThresholds = DEFAULT_DRIFT_THRESHOLDS;

let eventSeq = 0;
async function webhook(db: Db, type: string, callId: string, at: number): Promise<void> {
  await insertWebhookOnce(db, {
    eventId: `evt_${++eventSeq}`,
    type,
    callId,
    rawBody: '{}',
    receivedAt: new Date(at),
  });
}

/** A call first seen at `at`, created at the Service then, with the Service's status `status`. */
async function call(db: Db, callId: string, at: number, status = 'in_progress'): Promise<void> {
  await upsertDiscovered(db, {
    callId,
    crm,
    call: {
      createdAt: new Date(at),
      status,
      participantEmail: null,
      participantCompany: null,
      overallScore: null,
    },
    now: new Date(at),
  });
}

async function move(db: Db, callId: string, path: SyncState[], at: number, detail?: string): Promise<void> {
  for (const to of path) await transitionSyncStatus(db, { callId, crm, to, now: new Date(at), detail });
}

function harness(db: Db, clock: FakeClock) {
  const lines: { level: number; msg: string; code?: string; condition?: string }[] = [];
  const gauge = new Map<DriftCondition, number>();
  const monitor = createDriftMonitor({
    db,
    crm,
    clock,
    logger: createLogger({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) }),
    thresholds: T,
    setGauge: (c, raised) => gauge.set(c, raised ? 1 : 0),
  });
  return { monitor, lines, gauge };
}

describe('silence and drift conditions', () => {
  const current = useMigratedDatabase('embedded');

  it('webhook silence: raised while polling finds calls and no verified webhook comes, cleared by one', async () => {
    const db = current().db.prisma;
    const start = Date.UTC(2026, 3, 1, 9);
    const clock = new FakeClock(start);
    const { monitor, lines, gauge } = harness(db, clock);
    await webhook(db, 'call.started', 'w_0', start);
    await call(db, 'w_0', start);
    expect(await monitor.check()).toEqual([]);
    expect(gauge.get('webhook_silence')).toBe(0);

    // 40 minutes on, the poller found two new calls; no webhook since 09:00.
    await clock.advance(40 * MIN);
    await call(db, 'w_1', clock.now() - 5 * MIN);
    await call(db, 'w_2', clock.now() - MIN);
    const raised = await monitor.check();
    expect(raised.map((w) => w.code)).toEqual(['WEBHOOK_SILENCE']);
    expect(raised[0]!.message).toContain('2 call(s) were found by polling');
    expect(gauge.get('webhook_silence')).toBe(1);
    const warn = lines.filter((l) => l.level === 40);
    expect(warn).toMatchObject([{ code: 'WEBHOOK_SILENCE', condition: 'webhook_silence' }]);

    // Raised once: a second check logs nothing new.
    await monitor.check();
    expect(lines.filter((l) => l.level === 40)).toHaveLength(1);

    // A verified webhook arrives: cleared, with an info line.
    await webhook(db, 'call.started', 'w_3', clock.now());
    expect(await monitor.check()).toEqual([]);
    expect(gauge.get('webhook_silence')).toBe(0);
    expect(lines.at(-1)).toMatchObject({ level: 30, condition: 'webhook_silence' });
  });

  it('webhook silence is not raised when no call happened either', async () => {
    const db = current().db.prisma;
    const now = Date.UTC(2026, 4, 1, 9);
    // Calls exist, but all older than the window (the other test's, a month back).
    const facts = await readDriftFacts(db, { crm, nowMs: now, thresholds: T });
    expect(facts.callsInSilenceWindow).toBe(0);
    expect(detectDrift(facts, T, now)).toEqual([]);
  });

  it('Service behind: raised for a call completed over the lag with no analysis.ready, cleared when it comes', async () => {
    const db = current().db.prisma;
    const start = Date.UTC(2026, 5, 1, 9);
    const clock = new FakeClock(start);
    const { monitor, gauge } = harness(db, clock);
    // Completed per its webhook at 09:00; the worker found it completed and waits.
    await call(db, 'a_1', start - 30 * MIN, 'completed');
    await webhook(db, 'call.completed', 'a_1', start);
    await move(db, 'a_1', ['awaiting_analysis'], start + MIN, 'call is completed');
    // Keep the webhook-silence detector quiet: webhooks do arrive.
    const onlyBehind = async () => (await monitor.check()).filter((w) => w.condition === 'service_behind');

    await clock.advance(T.analysisLagMs - MIN);
    await webhook(db, 'call.started', 'other', clock.now());
    expect(await onlyBehind()).toEqual([]);

    await clock.advance(2 * MIN);
    await webhook(db, 'call.started', 'other2', clock.now());
    const raised = await onlyBehind();
    expect(raised).toHaveLength(1);
    expect(raised[0]!.message).toMatch(
      /^1 call\(s\) completed over 2 h ago have no analysis yet \(oldest since 2026-06-01T09:00:00.000Z\)/,
    );
    expect(gauge.get('service_behind')).toBe(1);

    await webhook(db, 'analysis.ready', 'a_1', clock.now());
    expect(await onlyBehind()).toEqual([]);
    expect(gauge.get('service_behind')).toBe(0);
  });

  it('Service behind counts from when the worker found the call completed, without webhooks', async () => {
    const db = current().db.prisma;
    const at = Date.UTC(2026, 6, 1, 9);
    await call(db, 'b_1', at, 'processing');
    await move(db, 'b_1', ['awaiting_analysis'], at, 'call is processing');
    const later = at + T.analysisLagMs + MIN;
    const facts = await readDriftFacts(db, { crm, nowMs: later, thresholds: T });
    expect(facts.awaitingAnalysisSince).toEqual([new Date(at)]);
    expect(detectDrift(facts, T, later).map((w) => w.code)).toContain('SERVICE_BEHIND');
    // The Service analysed it (the worker read it back): no longer waiting.
    await call(db, 'b_1', at, 'analyzed');
    expect((await readDriftFacts(db, { crm, nowMs: later, thresholds: T })).awaitingAnalysisSince).toEqual(
      [],
    );
  });

  it('no-match share: raised when it jumps above the week before, cleared when matching recovers', async () => {
    const db = current().db.prisma;
    const now = Date.UTC(2026, 8, 10, 12);
    const clock = new FakeClock(now);
    const { monitor, gauge } = harness(db, clock);
    const settle = async (id: string, at: number, matched: boolean) => {
      await call(db, id, at, 'analyzed');
      if (matched) await move(db, id, ['writing_back', 'written_back'], at);
      else await move(db, id, ['skipped'], at, noMatchReason(`${id}@example.com`));
    };
    // The week before: 20 calls, 2 unmatched (10%). Other skips do not count.
    for (let i = 0; i < 20; i++) await settle(`base_${i}`, now - 2 * 86_400_000 + i * MIN, i >= 2);
    await call(db, 'noemail', now - 86_400_000, 'analyzed');
    await move(db, 'noemail', ['skipped'], now - 86_400_000, 'the call has no participant email');
    // The last hour: 10 calls, 5 unmatched (50%).
    for (let i = 0; i < 10; i++) await settle(`recent_${i}`, now - 50 * MIN + i * MIN, i >= 5);

    const facts = await readDriftFacts(db, { crm, nowMs: now, thresholds: T });
    expect(facts.noMatch).toEqual({ recent: { calls: 10, none: 5 }, baseline: { calls: 20, none: 2 } });
    const raised = (await monitor.check()).filter((w) => w.condition === 'no_match_rise');
    expect(raised[0]?.message).toMatch(
      /^50% of the calls of the last 1 h matched no CRM record \(5 of 10\), against 10%/,
    );
    expect(gauge.get('no_match_rise')).toBe(1);

    // An hour later, matching works again: 10 matched calls; the bad hour is now in the baseline.
    await clock.advance(HOUR);
    for (let i = 0; i < 10; i++) await settle(`fixed_${i}`, clock.now() - 30 * MIN + i * MIN, true);
    expect((await monitor.check()).filter((w) => w.condition === 'no_match_rise')).toEqual([]);
    expect(gauge.get('no_match_rise')).toBe(0);
  });
});
