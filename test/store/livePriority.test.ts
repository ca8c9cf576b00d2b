import { describe, expect, it } from 'vitest';
import { prioritise, runAsLive } from '../../src/store/livePriority.js';

/** A one-connection client like PGlite: records the order queries ran in. */
function fakeClient() {
  const ran: string[] = [];
  let release: () => void = () => undefined;
  const client = {
    ran,
    hold: new Promise<void>((resolve) => (release = resolve)),
    release: () => release(),
    async query(sql: string) {
      if (sql === 'slow') await client.hold;
      ran.push(sql);
      return sql;
    },
    async transaction(fn: (tx: unknown) => Promise<unknown>) {
      return fn('tx');
    },
  };
  return client;
}

describe('prioritise (the embedded database serves live work first)', () => {
  it('runs a live query before bulk queries that were waiting longer', async () => {
    const raw = fakeClient();
    const db = prioritise(raw);
    const slow = db.query('slow');
    const bulk = [db.query('bulk 1'), db.query('bulk 2')];
    const live = runAsLive(() => db.query('live'));
    raw.release();
    await Promise.all([slow, ...bulk, live]);
    expect(raw.ran).toEqual(['slow', 'live', 'bulk 1', 'bulk 2']);
  });

  it('lets one transaction in at a time and leaves other members alone', async () => {
    const raw = fakeClient();
    const db = prioritise(raw);
    const order: string[] = [];
    await Promise.all([
      db.transaction(async () => {
        order.push('tx 1 start');
        await new Promise((resolve) => setImmediate(resolve));
        order.push('tx 1 end');
      }),
      db.transaction(async () => void order.push('tx 2')),
    ]);
    expect(order).toEqual(['tx 1 start', 'tx 1 end', 'tx 2']);
    expect(db.ran).toBe(raw.ran);
  });
});
