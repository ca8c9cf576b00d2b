/**
 * The console's reads and pages on a real database (embedded, and PostgreSQL when
 * TEST_DATABASE_URL is set), through app.inject: the same numbers as the status snapshot, failures
 * by code, search, the call page with its match decision, replay by code.
 */
import { h } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FailuresBody } from '../../src/console/views/failures.js';
import type { FastifyInstance } from 'fastify';
import type { MatchDecision } from '../../src/crm/types.js';
import { DEFAULT_DRIFT_THRESHOLDS } from '../../src/config/drift.js';
import { accessKeys } from '../../src/http/access.js';
import { dbConsoleSessions } from '../../src/store/consoleSessions.js';
import { consoleRoutes } from '../../src/console/routes.js';
import { adminRoutes } from '../../src/worker/adminRoutes.js';
import { consolePublicRoutes } from '../../src/console/publicRoutes.js';
import { recordLinker } from '../../src/console/links.js';
import { loadOverview } from '../../src/console/overview.js';
import { createDbSlotLedger } from '../../src/store/dbSlotLedger.js';
import { recordDealCalls } from '../../src/store/dealSignalRepo.js';
import { claimFollowupGeneration, settleFollowupClaim } from '../../src/store/followupRepo.js';
import { enqueueJob, JOB_PRIORITY } from '../../src/store/jobQueue.js';
import { saveCursor } from '../../src/store/cursorRepo.js';
import { endSync } from '../../src/store/syncMoves.js';
import { transitionSyncStatus, upsertDiscovered } from '../../src/store/syncStatusRepo.js';
import { POLL_CURSOR } from '../../src/sync/cursors.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { collectStatus } from '../../src/ops/status.js';
import { DATABASE_KINDS, useMigratedDatabase } from '../store/helpers.js';
import { testServer } from '../http/harness.js';
import path from 'node:path';

const NOW = Date.UTC(2026, 0, 7, 15, 30);
const TOKEN = 'console-unit-token-0123456789';
const DECISION: MatchDecision = {
  crm: 'salesforce',
  matchedBy: 'email',
  contact: {
    type: 'contact',
    id: '003000000000001AAA',
    label: 'Jane Doe',
    rule: 'contact_email',
    reason: 'The only contact with this email.',
    rejected: [{ id: '00Q000000000009AAA', label: 'Jane D. (lead)', reason: 'A contact wins over a lead.' }],
  },
  company: {
    type: 'company',
    id: null,
    label: null,
    rule: 'none',
    reason: 'No account found.',
    rejected: [],
  },
  deal: { type: 'deal', id: null, label: null, rule: 'none', reason: 'No open opportunity.', rejected: [] },
};

describe.each(DATABASE_KINDS)('console (%s)', (kind) => {
  const current = useMigratedDatabase(kind);
  const clock = new FakeClock(NOW);
  let app: FastifyInstance;
  let enqueued = 0;
  let keys = accessKeys(TOKEN);
  const auth = { authorization: `Bearer ${TOKEN}` };

  const deps = () => {
    const db = current().db.prisma;
    return {
      db,
      crm: 'salesforce' as const,
      clock,
      status: () =>
        collectStatus({
          db,
          crm: 'salesforce',
          clock,
          limits: { ratePerMinute: 60, burstPerSecond: 10, dailyCap: 100 },
          ledger: createDbSlotLedger({ db }),
          reserves: { liveWindowReserve: 1, liveDailyReserve: 0.1 },
          drift: DEFAULT_DRIFT_THRESHOLDS,
        }),
      links: recordLinker({
        crm: 'salesforce',
        hubspot: { baseUrl: 'https://api.hubapi.com' },
        salesforce: { instanceUrl: 'https://acme.my.salesforce.com', loginUrl: '', apiVersion: '62.0' },
      }),
      configDir: path.join(import.meta.dirname, '..', '..', 'config'),
      onEnqueued: () => void enqueued++,
      csrf: keys.csrf,
      tokenConfigured: true,
    };
  };

  beforeAll(async () => {
    const db = current().db.prisma;
    keys = accessKeys(TOKEN, { sessions: dbConsoleSessions(db, TOKEN) });
    const at = (minutesAgo: number) => new Date(NOW - minutesAgo * 60_000);
    const call = async (callId: string, email: string, company: string, minutesAgo: number) =>
      upsertDiscovered(db, {
        callId,
        crm: 'salesforce',
        call: { createdAt: at(minutesAgo), participantEmail: email, participantCompany: company },
        now: at(minutesAgo),
      });
    await call('call_ok', 'jane@acme.example', 'Acme Corp', 90);
    await transitionSyncStatus(db, { callId: 'call_ok', crm: 'salesforce', to: 'writing_back', now: at(81) });
    await transitionSyncStatus(db, {
      callId: 'call_ok',
      crm: 'salesforce',
      to: 'written_back',
      now: at(80),
      set: { writtenBackAt: at(80), crmContactId: '003000000000001AAA', crmActivityId: '00T000000000002AAA' },
    });
    await db.syncStatus.update({
      where: { callId_crm: { callId: 'call_ok', crm: 'salesforce' } },
      data: { matchDecision: DECISION as object, warnings: ['MAPPING_OPTIONAL_EMPTY: next_step left out'] },
    });
    const dealCall = { callId: 'call_ok', startedAt: at(81).getTime(), overallScore: 80, nextSteps: [] };
    const facts = { ...dealCall, objectionsDetected: 0, objectionsHandled: 0 };
    await recordDealCalls(db, {
      crm: 'salesforce',
      calls: [{ dealId: '006000000000009AAA', facts }],
      now: at(80),
    });
    for (const [id, minutesAgo] of [
      ['call_bad1', 60],
      ['call_bad2', 30],
    ] as const) {
      await call(id, `${id}@umbrella.example`, 'Umbrella Inc', minutesAgo);
      // As the worker fails a call (src/worker/jobOutcome.ts): the move and the last error.
      await endSync(db, {
        callId: id,
        crm: 'salesforce',
        from: 'discovered',
        to: 'failed',
        code: 'CRM_REJECTED',
        message: 'Salesforce refused the Task: FIELD_CUSTOM_VALIDATION_EXCEPTION',
        now: at(minutesAgo),
      });
    }
    await call('call_old', 'old@acme.example', 'Acme Corp', 10 * 24 * 60);
    app = testServer({
      access: keys,
      operatorRoutes: [consoleRoutes(deps()), adminRoutes({ ...deps(), onEnqueued: () => undefined })],
      publicRoutes: [consolePublicRoutes(keys)],
    }).app;
  });

  afterAll(async () => {
    await app?.close();
  });

  it('counts calls by state as the status snapshot does, and today / 7 days by call time', async () => {
    const o = await loadOverview(deps());
    expect(o.calls.all).toEqual((await deps().status()).calls);
    expect(o.calls.all).toMatchObject({ written_back: 1, failed: 2, discovered: 1 });
    expect(o.calls.today).toMatchObject({ written_back: 1, failed: 2, discovered: 0 });
    expect(o.calls.week).toMatchObject({ written_back: 1, failed: 2, discovered: 0 });
    // 14:10 UTC is the 23rd of the 24 hours shown (the last is 15:00, the current hour).
    expect(o.writtenPerHour).toHaveLength(24);
    expect(o.writtenPerHour[22]).toEqual({ hour: new Date(Date.UTC(2026, 0, 7, 14)), count: 1 });
    expect(o.writtenPerHour.reduce((a, h) => a + h.count, 0)).toBe(1);
    expect(o.warnings.map((w) => w.code)).toEqual(['WEBHOOK_SILENCE']);
  });

  it('renders the overview with the counts an admin compares', async () => {
    const res = await app.inject({ method: 'GET', url: '/console', headers: auth });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('data-count="all:failed">2<');
    expect(res.body).toContain('data-count="week:discovered">0<');
    expect(res.body).not.toMatch(/<script>|style="/);
    expect(res.body).not.toContain('data-budget="backfill"');
  });

  it('shows the backfill ETA while calls are due at backfill priority', async () => {
    const db = current().db.prisma;
    const job = await enqueueJob(db, {
      kind: 'writeback',
      key: 'writeback:console_backfill',
      priority: JOB_PRIORITY.backfill,
      now: new Date(NOW - 60_000),
    });
    try {
      const res = await app.inject({ method: 'GET', url: '/console', headers: auth });
      // One call, 2.01 requests -> 3, at 59/min from 15:30 UTC: done within the minute.
      expect(res.body).toMatch(
        /data-budget="backfill">Backfill: 1 call\(s\) queued, about 3 requests; done by 2026-01-07 15:3\d UTC\./,
      );
    } finally {
      await db.job.delete({ where: { id: BigInt(job.id) } });
    }
  });

  it('groups failures by code with a fix hint and a replay form carrying the CSRF token', async () => {
    const res = await app.inject({ method: 'GET', url: '/console/failures', headers: auth });
    expect(res.body).toContain('data-code="CRM_REJECTED"');
    expect(res.body).toContain('Replay these 2');
    expect(res.body).toMatch(/Latest message: <span class="mono">[^<]*FIELD_CUSTOM_VALIDATION_EXCEPTION/);
    expect(res.body).toContain(`name="csrf" value="${keys.csrf}"`);
    expect(res.body).toContain('fix the mapping or the field');
    const one = renderToString(
      h(FailuresBody, {
        csrf: 't',
        groups: [
          {
            code: 'CRM_REJECTED',
            count: 1,
            lastFailedAt: new Date(0),
            sampleCallIds: ['c1'],
            lastMessage: 'FIELD_CUSTOM_VALIDATION_EXCEPTION: Amount must be positive',
          },
        ],
      }),
    );
    expect(one).toContain('Replay this call');
    expect(one).toContain(
      'Latest message: <span class="mono">FIELD_CUSTOM_VALIDATION_EXCEPTION: Amount must be positive',
    );
    expect(one).not.toContain('Replay these');
  });

  it('serves /favicon.ico to anyone, so pages cause no 404', async () => {
    const res = await app.inject({ method: 'GET', url: '/favicon.ico' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('image/svg+xml');
    expect(res.body).toContain('<svg');
  });

  it('finds calls by id, email and company, and opens an exact id directly', async () => {
    for (const q of ['call_bad', 'UMBRELLA.example', 'umbrella inc']) {
      const res = await app.inject({
        method: 'GET',
        url: `/console/calls?q=${encodeURIComponent(q)}`,
        headers: auth,
      });
      expect(res.body, q).toContain('call_bad1');
      expect(res.body, q).toContain('call_bad2');
      expect(res.body, q).not.toContain('call_ok');
    }
    const exact = await app.inject({ method: 'GET', url: '/console/calls?q=call_ok', headers: auth });
    expect(exact.statusCode).toBe(303);
    expect(exact.headers.location).toBe('/console/calls/call_ok');
  });

  it('lists the most recently updated calls before any search, newest first, with their update time', async () => {
    const res = await app.inject({ method: 'GET', url: '/console/calls', headers: auth });
    expect(res.statusCode).toBe(200);
    const recent = res.body.slice(res.body.indexOf('id="recent-calls"'));
    expect(recent).toContain('Recently updated calls');
    const order = ['call_bad2', 'call_bad1', 'call_ok', 'call_old'].map((id) => recent.indexOf(`>${id}<`));
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    // call_bad2 was last updated 30 minutes before NOW (15:30 UTC), the exact instant on hover.
    expect(recent).toContain(
      '<td data-updated="true"><time datetime="2026-01-07T15:00:00.000Z" title="2026-01-07T15:00:00.000Z">2026-01-07 15:00 UTC</time>',
    );
    expect(recent).toContain('Umbrella Inc');
    const searched = await app.inject({ method: 'GET', url: '/console/calls?q=umbrella', headers: auth });
    expect(searched.body).not.toContain('id="recent-calls"');
  });

  it('shows a failure once in the call timeline: the move to failed carries the error', async () => {
    const res = await app.inject({ method: 'GET', url: '/console/calls/call_bad2', headers: auth });
    const timeline = res.body.slice(res.body.indexOf('id="timeline"'));
    expect(timeline.split('FIELD_CUSTOM_VALIDATION_EXCEPTION')).toHaveLength(2);
    expect(timeline).toContain('discovered → failed');
    expect(timeline).not.toContain('(try failed)');
    // The call still shows it as its last error.
    expect(res.body).toContain('data-error="CRM_REJECTED"');
  });

  it('writes deal-signal times like every other console time, the ISO instant on hover', async () => {
    const db = current().db.prisma;
    const writtenAt = new Date(NOW - 75 * 60_000);
    await db.dealSignal.updateMany({
      where: { crm: 'salesforce', dealId: '006000000000009AAA' },
      data: { writtenCallId: 'call_ok', writtenAt },
    });
    try {
      const res = await app.inject({ method: 'GET', url: '/console/calls/call_ok', headers: auth });
      expect(res.body).toContain('title="2026-01-07T14:15:00.000Z"');
      expect(res.body).toMatch(
        /Deal signals: written to deal 006000000000009AAA[^<]* at 2026-01-07 14:15 UTC/,
      );
      expect(res.body).not.toContain('at 2026-01-07T14:15');
    } finally {
      await db.dealSignal.updateMany({
        where: { crm: 'salesforce', dealId: '006000000000009AAA' },
        data: { writtenCallId: null, writtenAt: null },
      });
    }
  });

  it('shows the cursor as the calls it reached and when it polled, the token kept in a details box', async () => {
    const db = current().db.prisma;
    await saveCursor(db, {
      name: POLL_CURSOR,
      cursor: 'eyJvZmZzZXQiOjQyfQ-opaque',
      lastCallCreatedAt: new Date(NOW - 30 * 60_000),
      now: new Date(NOW - 2 * 60_000),
    });
    try {
      const res = await app.inject({ method: 'GET', url: '/console', headers: auth });
      const summary = /data-cursor="summary">(.*?)<\/p>/s.exec(res.body)?.[1] ?? '';
      expect(summary.replace(/<[^>]+>/g, '')).toMatch(/calls up to 2026-01-07 15:00 UTC, polled 2 min ago/);
      expect(summary).not.toContain('opaque');
      expect(res.body).toMatch(/<details>[\s\S]*data-cursor="position"[^>]*>eyJvZmZzZXQiOjQyfQ-opaque</);
    } finally {
      await db.syncCursor.delete({ where: { name: POLL_CURSOR } });
    }
  });

  it('shows a call with its records, links, why each was matched, warnings and timeline', async () => {
    const res = await app.inject({ method: 'GET', url: '/console/calls/call_ok', headers: auth });
    expect(res.body).toContain('https://acme.my.salesforce.com/lightning/r/Contact/003000000000001AAA/view');
    expect(res.body).toContain('https://acme.my.salesforce.com/lightning/r/Task/00T000000000002AAA/view');
    expect(res.body).toContain('The only contact with this email.');
    expect(res.body).toContain('A contact wins over a lead.');
    expect(res.body).toContain('MAPPING_OPTIONAL_EMPTY: next_step left out');
    expect(res.body).toContain('writing_back → written_back');
    expect(res.body).toContain('Deal signals: due: deal 006000000000009AAA not written with this call yet');
    const bad = await app.inject({ method: 'GET', url: '/console/calls/call_bad1', headers: auth });
    expect(bad.body).toContain('FIELD_CUSTOM_VALIDATION_EXCEPTION');
    expect(bad.body).not.toContain('Why this one');
    expect(bad.body).toContain('Deal signals: (not on a deal');
    const missing = await app.inject({ method: 'GET', url: '/console/calls/nope', headers: auth });
    expect(missing.statusCode).toBe(404);
  });

  it('says "not recorded" when a call has no match decision', async () => {
    const db = current().db.prisma;
    await db.syncStatus.update({
      where: { callId_crm: { callId: 'call_bad1', crm: 'salesforce' } },
      data: { crmContactId: '003000000000003AAA' },
    });
    const res = await app.inject({ method: 'GET', url: '/console/calls/call_bad1', headers: auth });
    expect(res.body).toContain('not recorded');
  });

  it('lists the mapping files with their validation', async () => {
    const res = await app.inject({ method: 'GET', url: '/console/mappings', headers: auth });
    expect(res.body).toContain('data-mapping="salesforce"');
    expect(res.body).toContain('(in use)');
    expect(res.body).toContain('valid');
  });

  it('replays a failure group from a form and refuses a form without its CSRF token', async () => {
    const form = { ...auth, 'content-type': 'application/x-www-form-urlencoded' };
    const refused = await app.inject({
      method: 'POST',
      url: '/console/replay',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: `crm_sync_session=${await keys.sessions!.create()}`,
      },
      payload: 'code=CRM_REJECTED',
    });
    expect(refused.statusCode).toBe(403);
    const res = await app.inject({
      method: 'POST',
      url: '/console/replay',
      headers: form,
      payload: `code=CRM_REJECTED&back=/console/failures&csrf=${keys.csrf}`,
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/console/failures?replayed=2');
    expect(enqueued).toBe(1);
    const db = current().db.prisma;
    expect(await db.syncStatus.count({ where: { state: 'failed' } })).toBe(0);
    const open = await app.inject({
      method: 'POST',
      url: '/console/replay',
      headers: form,
      payload: `callId=call_ok&back=https://evil.example/&csrf=${keys.csrf}`,
    });
    expect(open.headers.location).toBe('/console/failures?replayed=1');
  });

  it('signs in with the token, setting an HttpOnly SameSite cookie, and refuses a wrong one', async () => {
    const wrong = await app.inject({
      method: 'POST',
      url: '/console/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'token=wrong-token-000000000',
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    const ok = await app.inject({
      method: 'POST',
      url: '/console/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `token=${TOKEN}`,
    });
    expect(ok.statusCode).toBe(303);
    const cookie = String(ok.headers['set-cookie']);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).not.toContain(TOKEN);
    const page = await app.inject({
      method: 'GET',
      url: '/console',
      headers: { cookie: cookie.split(';')[0]! },
      remoteAddress: '198.51.100.4',
    });
    expect(page.statusCode).toBe(200);
  });

  it('takes the CLI replay by code and window on POST /admin/replay, and refuses a bad window', async () => {
    const db = current().db.prisma;
    await db.syncStatus.updateMany({
      where: { callId: { in: ['call_bad1', 'call_bad2'] } },
      data: { state: 'failed', lastErrorCode: 'CRM_REJECTED', updatedAt: new Date(NOW - 60_000) },
    });
    const bad = await app.inject({
      method: 'POST',
      url: '/admin/replay',
      headers: auth,
      payload: { since: 'last tuesday' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toMatch(/since: expected a date/);
    const res = await app.inject({
      method: 'POST',
      url: '/admin/replay',
      headers: auth,
      payload: { code: 'CRM_REJECTED', since: new Date(NOW - 120_000).toISOString() },
    });
    expect(res.json().callIds.sort()).toEqual(['call_bad1', 'call_bad2']);
  });

  it('asks for confirmation before a replay that generates follow-ups again, and replays nothing until then', async () => {
    const db = current().db.prisma;
    const now = new Date(NOW);
    await upsertDiscovered(db, { callId: 'call_uncertain', crm: 'salesforce', now });
    await claimFollowupGeneration(db, 'call_uncertain', 'salesforce', now);
    await settleFollowupClaim(db, {
      callId: 'call_uncertain',
      crm: 'salesforce',
      now,
      warning: 'FOLLOWUP_UNCERTAIN: x',
    });
    await transitionSyncStatus(db, { callId: 'call_uncertain', crm: 'salesforce', to: 'failed', now });
    const claim = async () =>
      (await db.syncStatus.findFirst({ where: { callId: 'call_uncertain' } }))?.followupsRequestedAt ?? null;
    const page = await app.inject({ method: 'GET', url: '/console/calls/call_uncertain', headers: auth });
    expect(page.body).toContain('name="regenerateFollowups"');

    const form = { ...auth, 'content-type': 'application/x-www-form-urlencoded' };
    const before = enqueued;
    const ask = await app.inject({
      method: 'POST',
      url: '/console/replay',
      headers: form,
      payload: `callId=call_uncertain&regenerateFollowups=on&back=/console/calls/call_uncertain&csrf=${keys.csrf}`,
    });
    expect(ask.statusCode).toBe(200);
    expect(ask.body).toContain('id="confirm-regenerate"');
    expect(ask.body).toContain('name="confirm" value="yes"');
    expect(ask.body).toContain('name="callId" value="call_uncertain"');
    expect(ask.body).toContain(`name="csrf" value="${keys.csrf}"`);
    // Nothing happened yet: still failed, its claim kept, no job.
    expect(enqueued).toBe(before);
    expect((await db.syncStatus.findFirst({ where: { callId: 'call_uncertain' } }))?.state).toBe('failed');
    expect(await claim()).not.toBeNull();

    const confirmed = await app.inject({
      method: 'POST',
      url: '/console/replay',
      headers: form,
      payload: `callId=call_uncertain&regenerateFollowups=true&confirm=yes&back=/console/calls/call_uncertain&csrf=${keys.csrf}`,
    });
    expect(confirmed.statusCode).toBe(303);
    expect(confirmed.headers.location).toBe('/console/calls/call_uncertain?replayed=1');
    expect(enqueued).toBe(before + 1);
    expect(await claim()).toBeNull();
  });
});
