/**
 * A follow-up request waiting for a budget slot must not hold the call's claim: a worker killed
 * during that wait never sent it, so the job's next run must ask the Service and get the drafts
 * (not a FOLLOWUP_UNCERTAIN warning). The claim is taken once the slot is granted, just before
 * the request leaves. The real client, budget and Service sandbox; the budget's ledger answers
 * only when the test opens its gate.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createRequestBudget } from '../../src/budget/budget.js';
import { InMemorySlotLedger } from '../../src/budget/ledger.js';
import type { PlanLimits } from '../../src/budget/plans.js';
import type { SlotGrant, SlotLedger, SlotRequest } from '../../src/budget/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { generateFollowupsOnce } from '../../src/pipelines/followups.js';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import { createServiceClient, SEND_DEADLINE_MS } from '../../src/service/client.js';
import type { AttemptInfo, ServiceClient } from '../../src/service/types.js';
import type { Db } from '../../src/store/database.js';
import { listFollowupDrafts } from '../../src/store/followupRepo.js';
import { upsertDiscovered } from '../../src/store/syncStatus/discovered.js';
import { getSyncStatus } from '../../src/store/syncStatus/queries.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { waitFor } from '../e2e/harness.js';
import { DATABASE_KINDS, useMigratedDatabase } from '../store/helpers.js';

const ROOMY: PlanLimits = { ratePerMinute: 6000, burstPerSecond: 1000, dailyCap: null };

/** A real ledger that grants nothing until `open()`: the budget holds the slot meanwhile. */
class GatedLedger extends InMemorySlotLedger implements SlotLedger {
  asked = 0;
  private opened!: () => void;
  private readonly gate = new Promise<void>((resolve) => (this.opened = resolve));

  override async acquire(request: SlotRequest): Promise<SlotGrant> {
    this.asked++;
    await this.gate;
    return super.acquire(request);
  }

  open(): void {
    this.opened();
  }
}

describe.each(DATABASE_KINDS)('a follow-up request waiting for the budget (%s)', (kind) => {
  const get = useMigratedDatabase(kind);
  const clock = new FakeClock(Date.UTC(2026, 0, 5, 12));
  const opened: { sandbox: ServiceSandbox; clients: ServiceClient[] }[] = [];
  let started = 0;

  afterEach(async () => {
    for (const env of opened.splice(0)) {
      for (const client of env.clients) await client.close();
      await env.sandbox.close();
    }
  });

  async function start(limits = ROOMY) {
    const sandbox = await startServiceSandbox({ limits, clock, seed: 7 });
    const env = { sandbox, clients: [] as ServiceClient[] };
    opened.push(env);
    // Each test its own call: the database is shared by the file's tests.
    const callId = sandbox.state.calls().filter((c) => c.status === 'analyzed')[started++]?.id;
    if (!callId) throw new Error('the seeded sandbox has too few analysed calls');
    /** A worker: its own budget over `ledger`, and a client of the sandbox. */
    const worker = (ledger: SlotLedger, onAttempt?: (info: AttemptInfo) => void, budgetLimits = ROOMY) => {
      const budget = createRequestBudget({ limits: budgetLimits, clock, ledger });
      const service = createServiceClient({
        baseUrl: sandbox.url,
        apiKey: sandbox.apiKey,
        budget,
        clock,
        random: () => 0,
        onAttempt,
      });
      env.clients.push(service);
      return { db: get().db.prisma, service, clock, logger: silentLogger };
    };
    return { sandbox, callId, worker };
  }

  const generate = (deps: Parameters<typeof generateFollowupsOnce>[0], callId: string) =>
    generateFollowupsOnce(deps, {
      callId,
      crm: 'hubspot',
      email: 'jane@acme.example',
      item: { jobId: 1, payload: { callId, reason: 'poll' }, priority: 'writeback' },
      claimed: false, // each test's call has never been asked for
    });

  const claimOf = async (db: Db, callId: string) =>
    (await getSyncStatus(db, callId, 'hubspot'))?.followupsRequestedAt ?? null;

  it('is claimed only once the slot is granted, so a kill while waiting loses no drafts', async () => {
    const { sandbox, callId, worker } = await start();
    const db = get().db.prisma;
    await upsertDiscovered(db, { callId, crm: 'hubspot', now: new Date(clock.now()) });
    const before = sandbox.state.followups(callId).length;

    // The first worker's request waits for its slot, and the worker is killed there.
    const held = new GatedLedger();
    void generate(worker(held), callId);
    await expect.poll(() => held.asked).toBe(1);
    expect(await claimOf(db, callId)).toBeNull();

    // The job's next run asks the Service, which makes the drafts once.
    const granted = new GatedLedger();
    const drafts = generate(worker(granted), callId);
    await expect.poll(() => granted.asked).toBe(1);
    expect(await claimOf(db, callId)).toBeNull();
    granted.open();
    const got = await drafts;
    const made = sandbox.state.followups(callId).slice(before);
    expect(got.map((d) => d.id)).toEqual(made.map((d) => d.id));
    expect(made.length).toBeGreaterThan(0);
    expect(await claimOf(db, callId)).not.toBeNull();
    expect((await listFollowupDrafts(db, callId)).map((d) => d.draftId)).toEqual(made.map((d) => d.id));
    expect((await getSyncStatus(db, callId, 'hubspot'))?.warnings).toEqual([]);
  });

  it('is not claimed when the budget refuses before granting, so the retry asks', async () => {
    const { worker } = await start();
    const callId = 'c-refused'; // never sent, so the Service need not know it
    const db = get().db.prisma;
    await upsertDiscovered(db, { callId, crm: 'hubspot', now: new Date(clock.now()) });
    const away = new Error("Can't reach database server");
    const failing = new (class extends InMemorySlotLedger {
      override acquire(): Promise<SlotGrant> {
        return Promise.reject(away);
      }
    })();
    await expect(generate(worker(failing), callId)).rejects.toBe(away);
    expect(await claimOf(db, callId)).toBeNull();
  });

  it('is not held while the request waits to be retried after a 429', async () => {
    // The Service allows one request a second; the budget (roomy) does not know it.
    const { sandbox, callId, worker } = await start({ ...ROOMY, burstPerSecond: 1 });
    const db = get().db.prisma;
    await upsertDiscovered(db, { callId, crm: 'hubspot', now: new Date(clock.now()) });
    const statuses: string[] = [];
    const deps = worker(new InMemorySlotLedger(), (info) => statuses.push(info.status));
    await deps.service.getCall(callId, { priority: 'writeback' }); // spends this second's request
    await clock.advance(100); // past the budget's pace for write-back requests, within the second
    let settled = false;
    const drafts = generate(deps, callId).finally(() => (settled = true));

    await expect.poll(() => statuses).toEqual(['2xx', '429']);
    expect(await claimOf(db, callId)).toBeNull();
    await waitFor('the retry to be answered', async () => {
      await clock.advance(250);
      return settled;
    });
    expect((await drafts).length).toBeGreaterThan(0);
    expect(statuses).toEqual(['2xx', '429', '2xx']);
    expect(sandbox.state.countersSnapshot().rejected429).toBe(1);
    expect(await claimOf(db, callId)).not.toBeNull();
  });

  it('is not sent on a slot its claim outlasted: released, a fresh slot, sent once', async () => {
    const { sandbox, callId, worker } = await start();
    const db = get().db.prisma;
    await upsertDiscovered(db, { callId, crm: 'hubspot', now: new Date(clock.now()) });
    const before = sandbox.state.followups(callId).length;
    const statuses: string[] = [];
    let granted = 0;
    const ledger = new (class extends InMemorySlotLedger {
      override async acquire(request: SlotRequest): Promise<SlotGrant> {
        const grant = await super.acquire(request);
        if (grant.granted) granted++;
        return grant;
      }
    })();
    const deps = worker(ledger, (info) => statuses.push(info.status));
    // The first claim's round trip outlasts the send deadline (a busy database). Claims and the
    // answer are raw statements (claimFollowupGeneration, saveFollowupAnswer); release is updateMany.
    const writes: string[] = [];
    const syncStatus = new Proxy(db.syncStatus, {
      get(target, prop) {
        const value = Reflect.get(target, prop) as unknown;
        if (prop !== 'updateMany' || typeof value !== 'function') return value;
        return async (args: { data: { followupsRequestedAt?: Date | null } }) => {
          const result = (await value.call(target, args)) as unknown;
          if (args.data.followupsRequestedAt === null) writes.push('release');
          return result;
        };
      },
    });
    const queryRaw = async (strings: TemplateStringsArray, ...values: unknown[]) => {
      const result = (await db.$queryRaw(strings, ...values)) as unknown;
      const text = strings.join('');
      if (text.includes('SET followups_requested_at')) {
        writes.push('claim');
        if (writes.length === 1) await clock.advance(SEND_DEADLINE_MS + 1);
      } else if (text.includes('SET followups_settled_at')) writes.push('settle');
      return result;
    };
    const executeRaw = async (strings: TemplateStringsArray, ...values: unknown[]) => {
      const result = (await db.$executeRaw(strings, ...values)) as unknown;
      if (strings.join('').includes('SET followups_settled_at')) writes.push('settle');
      return result;
    };
    const raw: Record<string | symbol, unknown> = { $queryRaw: queryRaw, $executeRaw: executeRaw };
    const slow = new Proxy(db, {
      get: (target, prop) => (prop === 'syncStatus' ? syncStatus : (raw[prop] ?? Reflect.get(target, prop))),
    });

    const got = await generate({ ...deps, db: slow }, callId);
    expect(writes).toEqual(['claim', 'release', 'claim', 'settle']);
    expect(granted).toBe(2); // the lapsed slot, then a fresh one
    const made = sandbox.state.followups(callId).slice(before);
    expect(statuses).toEqual(['2xx']); // one request reached the Service
    expect(made.length).toBeGreaterThan(0);
    expect(got.map((d) => d.id)).toEqual(made.map((d) => d.id));
    const stored = (await listFollowupDrafts(db, callId)).map((d) => d.draftId);
    expect(stored.sort()).toEqual(made.map((d) => d.id).sort()); // stored once each
    expect(await claimOf(db, callId)).not.toBeNull();
    expect((await getSyncStatus(db, callId, 'hubspot'))?.warnings).toEqual([]);
  });

  it('takes slots granted together, and the claims of those requests go in one statement', async () => {
    const { sandbox, worker } = await start();
    const db = get().db.prisma;
    // Calls of their own: the other tests take analysed calls from the front.
    const ids = sandbox.state
      .calls()
      .filter((c) => c.status === 'analyzed')
      .slice(-4)
      .map((c) => c.id);
    expect(ids).toHaveLength(4);
    for (const id of ids)
      await upsertDiscovered(db, { callId: id, crm: 'hubspot', now: new Date(clock.now()) });
    const ledger = new (class extends InMemorySlotLedger {
      /** Slots granted per ask. */
      granted: number[] = [];
      override async acquireMany(request: SlotRequest, wanted: number) {
        const grant = await super.acquireMany(request, wanted);
        this.granted.push(grant.granted ? grant.count : 0);
        return grant;
      }
    })();
    let claimStatements = 0;
    const counted = new Proxy(db, {
      get(target, prop) {
        const value = Reflect.get(target, prop) as unknown;
        if (prop !== '$queryRaw' || typeof value !== 'function') return value;
        return (strings: TemplateStringsArray, ...values: unknown[]) => {
          if (strings.join('').includes('SET followups_requested_at')) claimStatements++;
          return (value as (s: TemplateStringsArray, ...v: unknown[]) => unknown).call(
            target,
            strings,
            ...values,
          );
        };
      },
    });
    const before = ids.map((id) => sandbox.state.followups(id).length);
    const statuses: string[] = [];
    // A plan fast enough that its pace lets several requests start at one instant (at the
    // sales plan's one per second, every grant is of one slot).
    const fast = { ratePerMinute: 600_000, burstPerSecond: 100_000, dailyCap: null };
    const deps = { ...worker(ledger, (info) => statuses.push(info.status), fast), db: counted };

    const got = await Promise.all(ids.map((id) => generate(deps, id)));
    // Fewer asks than requests: some slots came in bulk, and their claims shared a statement.
    expect(ledger.granted.length).toBeLessThan(4);
    expect(ledger.granted.reduce((a, b) => a + b, 0)).toBe(4);
    expect(claimStatements).toBeLessThan(4);
    expect(statuses).toEqual(['2xx', '2xx', '2xx', '2xx']);
    for (const [i, id] of ids.entries()) {
      const made = sandbox.state.followups(id).slice(before[i]);
      expect(made.length).toBeGreaterThan(0);
      expect(got[i]!.map((d) => d.id)).toEqual(made.map((d) => d.id));
      expect(await claimOf(db, id)).not.toBeNull();
    }
  });
});
