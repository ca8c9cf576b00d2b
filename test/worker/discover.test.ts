import { describe, expect, it } from 'vitest';
import type { Call, CallPage, ServiceClient } from '../../src/service/types.js';
import { getCursor } from '../../src/store/cursorRepo.js';
import { systemClock } from '../../src/util/clock.js';
import { discoverCalls } from '../../src/worker/discover.js';
import { useMigratedDatabase } from '../store/helpers.js';

/** A page is written in chunks of ten calls; the cursor moves with the last chunk only. */
function analysedCall(i: number): Call {
  return {
    id: `call_d${i}`,
    status: 'analyzed',
    created_at: new Date(Date.UTC(2026, 0, 5, 10, i)).toISOString(),
    platform: 'zoom',
    participant: { name: `P ${i}`, email: `p${i}@acme.example`, company: 'Acme Corp' },
    methodology: 'MEDDIC',
  } as Call;
}

function serviceWithPages(pages: CallPage[]): ServiceClient {
  return {
    async *listCalls() {
      yield* pages;
    },
  } as unknown as ServiceClient;
}

describe('discoverCalls writes a page in chunks', () => {
  const database = useMigratedDatabase('embedded');

  it('queues every call of a 25-call page, saves the cursor, and repeats idempotently', async () => {
    const db = database().db.prisma;
    const page: CallPage = {
      calls: Array.from({ length: 25 }, (_, i) => analysedCall(i)),
      nextCursor: 'cur_25',
      hasMore: false,
    };
    const deps = { db, crm: 'hubspot' as const, service: serviceWithPages([page]), clock: systemClock };
    const options = { cursorName: 'chunks', reason: 'backfill' as const, priority: 'backfill' as const };

    const first = await discoverCalls(deps, options);
    expect(first).toEqual({ pages: 1, calls: 25, enqueued: 25, caughtUp: true });
    expect(
      await db.job.count({ where: { kind: 'writeback', key: { startsWith: 'writeback:call_d' } } }),
    ).toBe(25);
    expect((await getCursor(db, 'chunks'))?.cursor).toBe('cur_25');

    const again = await discoverCalls(deps, options);
    expect(again.enqueued).toBe(0);
    expect(await db.job.count({ where: { key: { startsWith: 'writeback:call_d' } } })).toBe(25);
  });

  it('an empty page without a cursor keeps the saved one', async () => {
    const db = database().db.prisma;
    const walk = (pages: CallPage[]) =>
      discoverCalls(
        { db, crm: 'hubspot', service: serviceWithPages(pages), clock: systemClock },
        { cursorName: 'empty', reason: 'poll', priority: 'backfill' },
      );
    await walk([{ calls: [analysedCall(90)], nextCursor: 'cur_90', hasMore: false }]);
    expect(await walk([{ calls: [], nextCursor: null, hasMore: false }])).toEqual({
      pages: 1,
      calls: 0,
      enqueued: 0,
      caughtUp: true,
    });
    expect((await getCursor(db, 'empty'))?.cursor).toBe('cur_90');
  });
});
