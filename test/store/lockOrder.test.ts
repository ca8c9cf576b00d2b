/**
 * One lock order (issue 22, defect 11): the webhook inbox's round statement, the poller's chunk
 * transaction and the write-back's multi-row statements run concurrently on PostgreSQL, for many
 * rounds, over overlapping calls each in its own shuffled order (arrival order, list order, batch
 * order). Every one locks the calls' rows in call id order, so they wait for each other but never
 * deadlock (SQLSTATE 40P01). A control proves the load can deadlock: the same rounds with one
 * participant locking its rows in the reverse order draw 40P01. The follow-ups' statements (the
 * answer, the webhook's drafts, the fenced settles and moves) race the same way, and each is
 * checked against the lock order of src/store/lockOrder.ts exactly: a transaction holding the
 * call's row takes the later locks (the drafts, the fence's job) once the statement waits for it;
 * had the statement taken any of them first, the two would deadlock (as the statements before the
 * order did: the inbox round, saveFollowupAnswer and both settles drew 40P01).
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { inTransaction, type Db } from '../../src/store/database.js';
import type { Fence } from '../../src/store/fence.js';
import {
  claimFollowupGeneration,
  releaseFollowupGeneration,
  saveFollowupAnswer,
  settleAbandonedFollowupClaim,
  settleFollowupClaim,
} from '../../src/store/followupClaims.js';
import { dbClockOf } from '../../src/store/dbClock.js';
import { enqueueJob } from '../../src/store/jobEnqueue.js';
import { claimJobs, completeJobs, heartbeatJobs, requeueExpiredJobs } from '../../src/store/jobQueue.js';
import { storeRound } from '../../src/store/inboxRound.js';
import { seededRandom } from '@crm-sync/sandboxes/service/rng';
import { upsertDiscoveredEach, upsertDiscoveredMany } from '../../src/store/syncStatus/discovered.js';
import { transitionSyncStatus, transitionSyncStatuses } from '../../src/store/syncStatus/transitions.js';
import { IllegalTransitionError } from '../../src/sync/states.js';
import type { Call } from '../../src/service/types.js';
import { systemClock } from '../../src/util/clock.js';
import { queueCallsWork } from '../../src/worker/discover.js';
import { TEST_DATABASE_URL, useMigratedDatabase } from './helpers.js';
import { delivery, T0 } from './roundDelivery.js';

const CALLS = Array.from({ length: 16 }, (_, i) => `call_${String.fromCharCode(65 + i)}${i % 3}`);
const ROUNDS = 120;

/** Half the calls, in a shuffled order. */
function someCalls(rand: () => number): string[] {
  const ids = [...CALLS];
  for (let i = ids.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [ids[i], ids[j]] = [ids[j]!, ids[i]!];
  }
  return ids.slice(0, CALLS.length / 2);
}

const listed = (id: string): Call =>
  ({
    id,
    status: 'analyzed',
    created_at: T0.toISOString(),
    participant: { email: `${id}@acme.example` },
  }) as Call;

let events = 0;

type Participant = (db: Db, ids: string[]) => Promise<unknown>;

const inbox: Participant = (db, ids) =>
  storeRound(
    db,
    'hubspot',
    ids.map((id) => delivery(`evt_${++events}`, id)),
  );

const poller: Participant = (db, ids) =>
  inTransaction(db, (tx) =>
    queueCallsWork(
      tx,
      { db: tx, crm: 'hubspot', service: undefined as never, clock: systemClock },
      ids.map(listed),
      'poll',
      T0,
    ),
  );

/** The write-back's statements over several calls: the carried rows, the move, the claims. */
const writeBack: Participant = async (db, ids) => {
  await upsertDiscoveredEach(
    db,
    'hubspot',
    ids.map((callId) => ({ callId, call: { status: 'analyzed' }, now: T0 })),
  );
  await transitionSyncStatuses(db, { callIds: ids, crm: 'hubspot', to: 'writing_back', now: T0 });
  await Promise.all(ids.map((id) => claimFollowupGeneration(db, id, 'hubspot', T0)));
  await Promise.all(ids.map((id) => releaseFollowupGeneration(db, id, 'hubspot', T0)));
  await transitionSyncStatuses(db, { callIds: ids, crm: 'hubspot', to: 'awaiting_analysis', now: T0 });
};

/** The control: rows taken in the reverse order, then recorded. */
const reversed: Participant = (db, ids) =>
  inTransaction(db, async (tx) => {
    await tx.$queryRaw`SELECT call_id FROM sync_status WHERE crm = 'hubspot' AND call_id = ANY (${ids})
      ORDER BY call_id COLLATE "C" DESC FOR UPDATE`;
    await upsertDiscoveredMany(
      tx,
      'hubspot',
      ids.map((callId) => ({ callId, now: T0 })),
    );
  });

const sqlState = (error: unknown): string | undefined =>
  (error as { meta?: { driverAdapterError?: { cause?: { code?: string } } } }).meta?.driverAdapterError?.cause
    ?.code ?? (/deadlock detected/.test(String(error)) ? '40P01' : undefined);

/**
 * Runs each participant ROUNDS times, all at once (or until a deadlock, with `untilDeadlock`: each
 * costs PostgreSQL's deadlock_timeout); the SQLSTATEs of the statements that failed.
 */
async function race(
  db: Db,
  participants: Participant[],
  seed: number,
  untilDeadlock = false,
): Promise<string[]> {
  const failures: string[] = [];
  await Promise.all(
    participants.map(async (run, p) => {
      const rand = seededRandom(seed + p);
      for (let round = 0; round < ROUNDS && !(untilDeadlock && failures.includes('40P01')); round++) {
        await run(db, someCalls(rand)).catch((error: unknown) =>
          failures.push(sqlState(error) ?? String(error)),
        );
      }
    }),
  );
  return failures;
}

/** A meeting point of `parties`: each call waits for all of them, then all get the meeting's number. */
function rendezvous(parties: number): () => Promise<number> {
  let meeting = 0;
  let waiting: (() => void)[] = [];
  return async () => {
    const mine = meeting;
    await new Promise<void>((resolve) => {
      waiting.push(resolve);
      if (waiting.length === parties) {
        waiting.forEach((release) => release());
        waiting = [];
        meeting++;
      }
    });
    return mine;
  };
}

/**
 * The follow-ups' statements: the answer to a generation request (drafts stored, claim settled,
 * fenced), the followup.generated webhook delivering the same drafts through the inbox round, and
 * the fenced settles and moves of a write-back run, with its job's lease kept alive meanwhile.
 * Answer and delivery store the same new drafts at about the same time (the round's draft ids are
 * shared), the case the rolling-deploy chaos scenario logged a 40P01 for.
 */
function followupParticipants(fence: Fence, workerId: string): Participant[] {
  // Answers and deliveries meet before each round and store the same new draft ids, in one round.
  const meet = rendezvous(4);
  const answer: Participant = async (db, ids) => {
    const id = await meet();
    return Promise.all(
      ids.map((callId) =>
        saveFollowupAnswer(db, {
          callId,
          crm: 'hubspot',
          drafts: [{ id: `fu_${id}_${callId}`, subject: 'Next steps', body: 'Hi' }],
          now: T0,
          fence,
        }),
      ),
    );
  };
  const generated: Participant = async (db, ids) => {
    const id = await meet();
    return storeRound(
      db,
      'hubspot',
      ids.map((callId) => ({
        ...delivery(`evt_${++events}`, callId, { onlyForNewDraft: true }, `fu_${id}_${callId}`),
        delivery: { ...delivery(`evt_${events}`, callId).delivery, type: 'followup.generated' },
      })),
    );
  };
  const settles: Participant = (db, ids) =>
    Promise.all(
      ids.map(async (callId) => {
        await claimFollowupGeneration(db, callId, 'hubspot', T0, fence);
        await settleFollowupClaim(db, { callId, crm: 'hubspot', now: T0, warning: 'W: lost', fence });
        await settleAbandonedFollowupClaim(db, {
          callId,
          crm: 'hubspot',
          now: T0,
          warning: () => 'W: abandoned',
          fence,
        });
        // Moves the write-back participant may have made already are refused: not what is raced here.
        await transitionSyncStatus(db, { callId, crm: 'hubspot', to: 'writing_back', now: T0, fence }).catch(
          (error: unknown) => {
            if (!(error instanceof IllegalTransitionError)) throw error;
          },
        );
      }),
    );
  const lease: Participant = async (db) => {
    const held = await heartbeatJobs(db, {
      ids: [fence.jobId],
      epochs: [fence.epoch],
      workerId,
      leaseMs: 3_600_000,
      now: T0,
    });
    if (held.length !== 1) throw new Error('the fence lost its lease');
  };
  return [answer, generated, settles, answer, generated, lease, writeBack];
}

/**
 * Holds the lock order's earlier locks (`first`) in a transaction of its own until `statement`
 * waits for them, then takes later ones (`next`) there: a statement that took any of those before
 * waiting deadlocks with it (40P01); one keeping the order just waits. What each side came to.
 */
async function holdingFirst(
  url: string,
  first: string,
  statement: () => Promise<unknown>,
  next: string[],
): Promise<{ held: string; statement: string }> {
  const outcome = (p: Promise<unknown>) =>
    p.then(
      () => 'ok',
      (error: unknown) => sqlState(error) ?? String(error),
    );
  const tx = new pg.Client({ connectionString: url });
  await tx.connect();
  try {
    await tx.query('BEGIN');
    await tx.query(first);
    const ran = outcome(statement());
    // Waits (no timer) until the statement is queued behind the held lock.
    while ((await tx.query(WAITERS)).rows[0].n === 0);
    const held = await outcome(
      (async () => {
        for (const sql of next) await tx.query(sql);
      })(),
    );
    await tx.query(held === 'ok' ? 'COMMIT' : 'ROLLBACK');
    return { held, statement: await ran };
  } finally {
    await tx.end();
  }
}

/** A job of its own kind, claimed by worker `kind` for an hour: a run's fence. */
async function runningFence(db: Db, kind: string): Promise<Fence> {
  await enqueueJob(db, { kind, key: kind, priority: 5, now: T0 });
  const [job] = await claimJobs(db, { workerId: kind, limit: 1, leaseMs: 3_600_000, now: T0, kinds: [kind] });
  return { jobId: job!.id, epoch: job!.epoch };
}

const WAITERS = `SELECT count(*)::int AS n FROM pg_stat_activity
                 WHERE datname = current_database() AND wait_event_type = 'Lock'`;

describe.runIf(TEST_DATABASE_URL)('one lock order on PostgreSQL', { timeout: 240_000 }, () => {
  const current = useMigratedDatabase('postgres');

  describe("each statement takes the call's row before its drafts and its fence's job", () => {
    let fence: Fence;
    const lockCall = (callId: string) =>
      `SELECT 1 FROM sync_status WHERE call_id = '${callId}' AND crm = 'hubspot' FOR UPDATE`;
    const insertDraft = (callId: string, draftId: string) =>
      `INSERT INTO call_followup (call_id, draft_id, subject, body, to_addresses, raw, received_at)
       VALUES ('${callId}', '${draftId}', 'Next steps', 'Hi', '{}', '{}', now()) ON CONFLICT DO NOTHING`;
    const lockFenceJob = () => `SELECT 1 FROM job WHERE id = ${fence.jobId} FOR UPDATE`;
    const claimed = async (callId: string) => {
      const db = current().db.prisma;
      await upsertDiscoveredMany(db, 'hubspot', [{ callId, now: T0 }]);
      await db.syncStatus.update({
        where: { callId_crm: { callId, crm: 'hubspot' } },
        data: { followupsRequestedAt: T0 },
      });
      return db;
    };

    it('sets up a running job as the fence', async () => {
      fence = await runningFence(current().db.prisma, 'order_fence');
      expect(fence.epoch).toBe(1);
    });

    it('the inbox round delivering a follow-up draft', async () => {
      const db = await claimed('order_inbox');
      const round = () =>
        storeRound(db, 'hubspot', [delivery('order_evt', 'order_inbox', { onlyForNewDraft: true }, 'd1')]);
      const url = current().target.url!;
      expect(
        await holdingFirst(url, lockCall('order_inbox'), round, [insertDraft('order_inbox', 'd1')]),
      ).toEqual({
        held: 'ok',
        statement: 'ok',
      });
    });

    it('saveFollowupAnswer, fenced', async () => {
      const db = await claimed('order_answer');
      const answer = () =>
        saveFollowupAnswer(db, {
          callId: 'order_answer',
          crm: 'hubspot',
          drafts: [{ id: 'd1', subject: 'Next steps', body: 'Hi' }],
          now: T0,
          fence,
        });
      const url = current().target.url!;
      expect(
        await holdingFirst(url, lockCall('order_answer'), answer, [
          insertDraft('order_answer', 'd1'),
          lockFenceJob(),
        ]),
      ).toEqual({ held: 'ok', statement: 'ok' });
    });

    it.each([
      [
        'settleFollowupClaim',
        (db: Db, callId: string) =>
          settleFollowupClaim(db, { callId, crm: 'hubspot', now: T0, warning: 'W: lost', fence }),
      ],
      [
        'settleAbandonedFollowupClaim',
        (db: Db, callId: string) =>
          settleAbandonedFollowupClaim(db, {
            callId,
            crm: 'hubspot',
            now: T0,
            warning: () => 'W: gone',
            fence,
          }),
      ],
      [
        'transitionSyncStatus',
        (db: Db, callId: string) =>
          transitionSyncStatus(db, { callId, crm: 'hubspot', to: 'awaiting_analysis', now: T0, fence }),
      ],
      [
        'transitionSyncStatuses',
        (db: Db, callId: string) =>
          transitionSyncStatuses(db, {
            callIds: [callId],
            crm: 'hubspot',
            to: 'awaiting_analysis',
            now: T0,
            fences: [fence],
          }),
      ],
      [
        'claimFollowupGeneration',
        async (db: Db, callId: string) => {
          await db.syncStatus.update({
            where: { callId_crm: { callId, crm: 'hubspot' } },
            data: { followupsRequestedAt: null },
          });
          return claimFollowupGeneration(db, callId, 'hubspot', T0, fence);
        },
      ],
    ] as const)('%s, fenced', async (name, statement) => {
      const callId = `order_${name}`;
      const db = await claimed(callId);
      const url = current().target.url!;
      expect(
        await holdingFirst(url, lockCall(callId), () => statement(db, callId), [lockFenceJob()]),
      ).toEqual({
        held: 'ok',
        statement: 'ok',
      });
    });
  });

  describe("the job queue's statements over several jobs lock them by id", () => {
    /** Three running jobs of `worker`, their rows last updated (so scanned) in descending id order. */
    const running = async (worker: string) => {
      const db = current().db.prisma;
      for (const n of [1, 2, 3])
        await enqueueJob(db, { kind: `order_${worker}`, key: `order_${worker}_${n}`, priority: 1, now: T0 });
      const jobs = await claimJobs(db, {
        workerId: worker,
        limit: 3,
        leaseMs: 60_000,
        now: T0,
        kinds: [`order_${worker}`],
      });
      const ids = jobs.map((j) => j.id).sort((a, b) => b - a);
      for (const id of ids) await db.$executeRaw`UPDATE job SET updated_at = updated_at WHERE id = ${id}`;
      return { db, ids, epochs: ids.map((id) => jobs.find((j) => j.id === id)!.epoch) };
    };
    const lockJob = (id: number) => `SELECT 1 FROM job WHERE id = ${id} FOR UPDATE`;

    it.each([
      [
        'heartbeatJobs',
        (db: Db, ids: number[], epochs: number[], workerId: string) =>
          heartbeatJobs(db, { ids, epochs, workerId, leaseMs: 60_000, now: T0 }),
      ],
      [
        'completeJobs',
        (db: Db, ids: number[], epochs: number[], workerId: string) =>
          completeJobs(db, { ids, epochs, workerId, now: T0 }),
      ],
      // Every lease has run out by the clock it is given.
      [
        'requeueExpiredJobs',
        (db: Db) => requeueExpiredJobs(db, T0, dbClockOf(new Date('2100-01-01T00:00:00Z'))),
      ],
    ] as const)('%s', async (name, statement) => {
      const { db, ids, epochs } = await running(name);
      const [last, middle, first] = ids as [number, number, number];
      const url = current().target.url!;
      expect(
        await holdingFirst(url, lockJob(first), () => statement(db, ids, epochs, name), [
          lockJob(middle),
          lockJob(last),
        ]),
      ).toEqual({ held: 'ok', statement: 'ok' });
    });
  });

  it(`inbox, poller and write-back never deadlock over overlapping calls (${ROUNDS} rounds each)`, async () => {
    const db = current().db.prisma;
    await upsertDiscoveredMany(
      db,
      'hubspot',
      CALLS.map((callId) => ({ callId, now: T0 })),
    );
    expect(await race(db, [inbox, poller, writeBack, inbox, poller], 20261128, true)).toEqual([]);
    // They did run: every call's row was taken by each of them.
    expect(await db.webhookInbox.count({ where: { NOT: { eventId: { startsWith: 'order_' } } } })).toBe(
      2 * ROUNDS * (CALLS.length / 2),
    );
  });

  it(`follow-up answers, their webhook drafts and fenced settles never deadlock (${ROUNDS} rounds each)`, async () => {
    const db = current().db.prisma;
    await upsertDiscoveredMany(
      db,
      'hubspot',
      CALLS.map((callId) => ({ callId, now: T0 })),
    );
    const fence = await runningFence(db, 'race_fence');
    const failures = await race(db, followupParticipants(fence, 'race_fence'), 20261129);
    expect(failures).toEqual([]);
    // They did run: drafts stored by answer and delivery, each once.
    expect(await db.callFollowup.count()).toBeGreaterThan(ROUNDS);
  });

  it('the control deadlocks: a participant taking the rows in the reverse order draws 40P01', async () => {
    const db = current().db.prisma;
    const failures = await race(db, [inbox, poller, writeBack, reversed], 7, true);
    expect(failures).toContain('40P01');
  });
});
