/**
 * A claimed follow-up request the Service did not act on (a refused connection) while the database
 * goes away too: the claim must be undone once the database is back, or the call would be written
 * without drafts and without a warning. PostgreSQL through a TCP proxy the test cuts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.js';
import { generateFollowupsOnce } from '../../src/pipelines/followups.js';
import { ServiceTransientError } from '../../src/service/errors.js';
import type { FollowupOptions, ServiceClient } from '../../src/service/types.js';
import { openDatabase, type Database } from '../../src/store/database.js';
import { claimFollowupGeneration } from '../../src/store/followupClaims.js';
import { upsertDiscovered } from '../../src/store/syncStatus/discovered.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { waitFor } from '../e2e/harness.js';
import { createMigratedDatabase, TEST_DATABASE_URL, type TestDatabase } from '../store/helpers.js';
import { startTcpProxy, type TcpProxy } from '../support/tcpProxy.js';

let target: TestDatabase;
let proxy: TcpProxy;
let db: Database;

describe.skipIf(!TEST_DATABASE_URL)('a follow-up claim when the database goes away', () => {
  beforeAll(async () => {
    target = await createMigratedDatabase('postgres');
    const url = new URL(target.url!);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.host = `127.0.0.1:${proxy.port}`;
    db = await openDatabase({ databaseUrl: url.toString(), dataDir: target.dataDir });
  });

  afterAll(async () => {
    proxy?.restore();
    await db?.close();
    await proxy?.close();
    await target?.drop(false);
  });

  it('is undone once the database is back, so the next try asks the Service', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 5, 12));
    const lines: string[] = [];
    const logger = createLogger({ level: 'info' }, { write: (l: string) => void lines.push(l) });
    await upsertDiscovered(db.prisma, { callId: 'c1', crm: 'hubspot', now: new Date(clock.now()) });
    // The slot is granted and the claim taken (aroundSend); then the connection is refused, and
    // the database outage starts at the same moment.
    const service = {
      generateFollowups: (_id: string, _body: unknown, opts: FollowupOptions) =>
        opts.aroundSend!(() => {
          proxy.cut();
          const ctx = { method: 'POST', path: '/v1/calls/c1/followups' };
          return Promise.reject(new ServiceTransientError('refused', ctx, 'refused'));
        }),
    } as unknown as ServiceClient;

    const attempt = generateFollowupsOnce(
      { db: db.prisma, service, clock, logger },
      {
        callId: 'c1',
        crm: 'hubspot',
        email: 'a@b.c',
        item: { jobId: 1, payload: { callId: 'c1', reason: 'poll' }, priority: 'writeback' },
        claimed: false,
      },
    ).then(
      () => 'resolved',
      (err: unknown) => (err as Error).message,
    );
    await waitFor('the release to fail', async () =>
      lines.some((l) => l.includes('could not release a follow-up claim')),
    );
    proxy.restore();
    let settled: string | undefined;
    void attempt.then((s) => (settled = s));
    await waitFor('the attempt to end', async () => {
      await clock.advance(1_000);
      return settled !== undefined;
    });
    expect(settled).not.toBe('resolved');
    // Released: a new claim succeeds, so the job's next try generates the drafts.
    expect(await claimFollowupGeneration(db.prisma, 'c1', 'hubspot', new Date(clock.now()))).toBe(true);
  });
});
