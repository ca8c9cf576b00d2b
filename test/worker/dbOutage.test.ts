/**
 * A database outage through the real worker: its PostgreSQL connection runs through a TCP proxy
 * the test cuts and restores (the shared server is never touched). While the database is away the
 * webhook receiver answers 503 with Retry-After (so the Service retries) and /readyz says not
 * ready; every loop keeps going; once the proxy lets connections through again the worker carries
 * on by itself, and no acknowledged event is lost. PostgreSQL only (TEST_DATABASE_URL).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import {
  SIGNATURE_HEADER,
  signWebhookBody,
  startServiceSandbox,
  type ServiceSandbox,
} from '@crm-sync/sandboxes/service';
import { CONNECT_TIMEOUT_MS, openDatabase, type Database } from '../../src/store/database.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { completeCall, createCall, waitFor } from '../e2e/harness.js';
import { createMigratedDatabase, TEST_DATABASE_URL, type TestDatabase } from '../store/helpers.js';
import { startTcpProxy, type TcpProxy } from '../support/tcpProxy.js';
import { ROOMY_LIMITS, startInProcessWorker, tickUntil, type InProcessWorker } from './inProcess.js';

const JANE = { name: 'Jane Doe', email: 'jane.doe@acme.example', company: 'Acme Corp' };

let clock: FakeClock;
let svc: ServiceSandbox;
let hs: HubSpotSandbox;
let target: TestDatabase;
let proxy: TcpProxy;
let worker: InProcessWorker;
/** A connection of the test's own, around the proxy, to look at what the worker stored. */
let direct: Database;

describe.skipIf(!TEST_DATABASE_URL)('a database outage', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    clock = new FakeClock();
    [svc, hs] = await Promise.all([
      startServiceSandbox({ clock, seedCalls: 0, limits: ROOMY_LIMITS, analysisDelayMs: 1_000 }),
      startHubSpotSandbox({ clock, limits: { perWindow: 10_000 } }),
    ]);
    target = await createMigratedDatabase('postgres');
    const url = new URL(target.url!);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.host = `127.0.0.1:${proxy.port}`;
    worker = await startInProcessWorker(clock, svc, hs, { DATABASE_URL: url.toString() });
    direct = await openDatabase({ databaseUrl: target.url, dataDir: target.dataDir });
  });

  afterAll(async () => {
    proxy?.restore();
    // A job may still be waiting on the fake clock (a retry's backoff): keep time moving while
    // the worker drains, or its stop would wait for a clock nobody advances.
    let closed = false;
    const closing = (worker ? worker.close() : Promise.resolve()).finally(() => (closed = true));
    while (!closed) {
      await clock.advance(1_000);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await closing;
    await direct?.close();
    await proxy?.close();
    await target?.drop(false);
    await Promise.all([svc?.close(), hs?.close()]);
  });

  /** Delivers every event the Service emitted for the call; answers by event id. */
  async function deliver(
    callId: string,
    limit = Infinity,
  ): Promise<Map<string, { status: number; retryAfter: string | null }>> {
    const answers = new Map<string, { status: number; retryAfter: string | null }>();
    const events = svc.state.events.filter((e) => e.event.data.call_id === callId).slice(0, limit);
    for (const { event, body } of events) {
      const res = await fetch(`${worker.handle.url}/webhooks`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [SIGNATURE_HEADER]: signWebhookBody(body, svc.webhookSecret),
        },
        body,
      });
      await res.arrayBuffer();
      answers.set(event.id, { status: res.status, retryAfter: res.headers.get('retry-after') });
    }
    return answers;
  }

  /** An analysed call with all of its events emitted. */
  async function analysedCall(): Promise<string> {
    const id = await createCall(svc, JANE);
    await completeCall(svc, id);
    await clock.advance(1_000); // analysis.ready
    return id;
  }

  const logged = (text: string) => worker.logLines.filter((l) => l.includes(text)).length;

  it('answers 503 while it cannot store, recovers by itself, and loses nothing acknowledged', async () => {
    const acknowledged = new Set<string>();
    const ack = (answers: Map<string, { status: number }>) => {
      for (const [id, a] of answers) if (a.status >= 200 && a.status < 300) acknowledged.add(id);
    };

    const before = await analysedCall();
    const calm = await deliver(before);
    expect([...calm.values()].every((a) => a.status === 202)).toBe(true);
    ack(calm);

    proxy.cut();
    const during = await analysedCall();
    const refused = await deliver(during);
    expect(refused.size).toBeGreaterThan(0);
    for (const answer of refused.values()) {
      expect(answer.status).toBe(503);
      expect(Number(answer.retryAfter)).toBeGreaterThan(0);
    }
    ack(refused);
    const notReady = await worker.get<{ ready: boolean; checks: { database: { ok: boolean } } }>('/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.body.checks.database.ok).toBe(false);

    // Every loop meets the outage: the runner's claims, the poll lease, the job heartbeats.
    const claimsFailed = logged('could not claim jobs');
    const leaseFailed = logged('lease renewal failed');
    await tickUntil(
      clock,
      'the runner and the poller to meet the outage',
      async () =>
        logged('could not claim jobs') > claimsFailed + 2 && logged('lease renewal failed') > leaseFailed,
      { stepMs: 1_000 },
    );

    // A database that stops answering instead of refusing: still a prompt 503, not a hang past
    // the Service's 10 s delivery timeout (the pool's connect timeout, real time, decides).
    proxy.cut('blackhole');
    const silent = await analysedCall();
    const started = Date.now();
    const unanswered = await deliver(silent, 1);
    expect([...unanswered.values()].map((a) => a.status)).toEqual([503]);
    expect(Date.now() - started).toBeLessThan(CONNECT_TIMEOUT_MS + 2_000);

    proxy.restore();
    // The Service retries what was refused; the worker stores it now, with no restart.
    await waitFor('the retried deliveries to be stored', async () => {
      const again = new Map([...(await deliver(during)), ...(await deliver(silent))]);
      ack(again);
      return [...again.values()].every((a) => a.status === 202 || a.status === 200);
    });
    const after = await analysedCall();
    ack(await deliver(after));

    const states = async () =>
      Promise.all([before, during, silent, after].map(async (id) => (await worker.call(id))?.state));
    await tickUntil(
      clock,
      'every call to be written back',
      async () => (await states()).every((s) => s === 'written_back'),
      { stepMs: 1_000, describe: states },
    );
    expect((await worker.get('/readyz')).status).toBe(200);

    // Nothing acknowledged is lost: each is in the inbox and was worked off.
    const stored = await direct.prisma.webhookInbox.findMany({
      where: { eventId: { in: [...acknowledged] }, outcome: { in: ['accepted', 'processed'] } },
      select: { eventId: true },
    });
    expect(new Set(stored.map((s) => s.eventId))).toEqual(acknowledged);
    // Each call has exactly one activity in HubSpot.
    for (const id of [before, during, silent, after]) {
      const activities = [...hs.state.store.objects.calls.values()].filter(
        (o) => o.properties.crmsync_call_id === id && !o.archived,
      );
      expect(activities, id).toHaveLength(1);
    }
    // The poll leadership came back without a restart.
    await tickUntil(clock, 'the poll lease to be renewed', async () => {
      const lease = await direct.prisma.leaderLease.findUnique({ where: { name: 'poller' } });
      return lease?.holder === worker.handle.workerId && lease.expiresAt.getTime() > clock.now();
    });
  });

  it('records the result of a job that was under way when the database went, once it is back', async () => {
    // Cut the database at the moment the worker's HubSpot batch write arrives: the CRM write
    // succeeds, then recording it cannot.
    const faults = hs.state.faults;
    const take = faults.take.bind(faults);
    let cutDuringWrite = false;
    faults.take = (path: string) => {
      if (!cutDuringWrite && /\/crm\/objects\/2026-09\/calls\/batch\/(upsert|create)$/.test(path)) {
        cutDuringWrite = true;
        proxy.cut();
      }
      return take(path);
    };
    const unexpected = logged('job runner: unexpected error');
    const id = await analysedCall();
    await deliver(id);
    try {
      await tickUntil(clock, 'the batch write to meet the cut', async () => cutDuringWrite, { stepMs: 500 });
      await tickUntil(
        clock,
        'the runner to try recording the result',
        async () => logged('could not record a job result') > 0,
      );
    } finally {
      faults.take = take;
      proxy.restore();
    }
    await tickUntil(
      clock,
      'the call to be written back',
      async () => (await worker.call(id))?.state === 'written_back',
      {
        stepMs: 1_000,
        describe: () => worker.call(id),
      },
    );
    // The result was recorded, not dropped: no job stranded until its lease lapsed.
    expect(logged('job runner: unexpected error')).toBe(unexpected);
    const activities = [...hs.state.store.objects.calls.values()].filter(
      (o) => o.properties.crmsync_call_id === id && !o.archived,
    );
    expect(activities).toHaveLength(1);
    const job = await direct.prisma.job.findFirst({
      where: { key: `writeback:${id}` },
      orderBy: { id: 'desc' },
    });
    expect(job?.state).toBe('done');
  });
});
