/**
 * One lock order (issue 22, defect 11): the webhook inbox's round statement, the poller's chunk
 * transaction and the write-back's multi-row statements run concurrently on PostgreSQL, for many
 * rounds, over overlapping calls each in its own shuffled order (arrival order, list order, batch
 * order). Every one locks the calls' rows in call id order, so they wait for each other but never
 * deadlock (SQLSTATE 40P01). A control proves the load can deadlock: the same rounds with one
 * participant locking its rows in the reverse order draw 40P01.
 */
import { describe, expect, it } from 'vitest';
import { inTransaction, type Db } from '../../src/store/database.js';
import { claimFollowupGeneration, releaseFollowupGeneration } from '../../src/store/followupRepo.js';
import { storeRound } from '../../src/store/inboxRound.js';
import { seededRandom } from '../../src/sandbox/service/rng.js';
import {
  transitionSyncStatuses,
  upsertDiscoveredEach,
  upsertDiscoveredMany,
} from '../../src/store/syncStatusRepo.js';
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

describe.runIf(TEST_DATABASE_URL)('one lock order on PostgreSQL', { timeout: 240_000 }, () => {
  const current = useMigratedDatabase('postgres');

  it(`inbox, poller and write-back never deadlock over overlapping calls (${ROUNDS} rounds each)`, async () => {
    const db = current().db.prisma;
    await upsertDiscoveredMany(
      db,
      'hubspot',
      CALLS.map((callId) => ({ callId, now: T0 })),
    );
    expect(await race(db, [inbox, poller, writeBack, inbox, poller], 20261128, true)).toEqual([]);
    // They did run: every call's row was taken by each of them.
    expect(await db.webhookInbox.count()).toBe(2 * ROUNDS * (CALLS.length / 2));
  });

  it('the control deadlocks: a participant taking the rows in the reverse order draws 40P01', async () => {
    const db = current().db.prisma;
    const failures = await race(db, [inbox, poller, writeBack, reversed], 7, true);
    expect(failures).toContain('40P01');
  });
});
