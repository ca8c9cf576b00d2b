/**
 * `crm-sync status` read straight from the database (PostgreSQL, no worker to ask) warns about a
 * rejected Service key, and `--json` carries it as `serviceKey` (issue 23, item 5).
 */
import { describe, expect, it } from 'vitest';
import { InMemorySlotLedger } from '../../src/budget/ledger.js';
import { formatStatus } from '../../src/cli/statusFormat.js';
import { enqueueJob, JOB_PRIORITY } from '../../src/store/jobQueue.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { collectStatus } from '../../src/ops/status.js';
import { DATABASE_KINDS, useMigratedDatabase } from '../store/helpers.js';

const NOW = Date.UTC(2026, 1, 10, 12);
const REASON = 'the Service API key was rejected (401): replace SERVICE_API_KEY';

describe.each(DATABASE_KINDS)('status: a rejected Service key, from the database (%s)', (kind) => {
  const current = useMigratedDatabase(kind);

  it('warns and carries the held jobs and reason in the snapshot', async () => {
    const db = current().db.prisma;
    const deps = {
      db,
      crm: 'hubspot' as const,
      clock: new FakeClock(NOW),
      limits: { ratePerMinute: 60, burstPerSecond: 10, dailyCap: 10_000 },
      ledger: new InMemorySlotLedger(),
    };
    const before = await collectStatus(deps);
    expect(before.serviceKey).toEqual({ heldJobs: 0, reason: null });
    expect(formatStatus(before)).not.toContain('SERVICE_API_KEY');

    // As src/worker/jobOutcome.ts holds a job the Service refused with 401.
    const job = await enqueueJob(db, {
      kind: 'writeback',
      key: 'writeback:k1',
      priority: JOB_PRIORITY.writeback,
      now: new Date(NOW - 1000),
    });
    await db.job.update({
      where: { id: BigInt(job.id) },
      data: { lastError: `SERVICE_UNAUTHORIZED: ${REASON}`, runAt: new Date(NOW + 3_600_000) },
    });
    const status = await collectStatus(deps);
    expect(status.serviceKey).toEqual({ heldJobs: 1, reason: REASON });
    expect(JSON.parse(JSON.stringify(status)).serviceKey).toEqual({ heldJobs: 1, reason: REASON });
    expect(formatStatus(status)).toContain(
      'WARNING: the Service rejected SERVICE_API_KEY (401); replace it and restart the worker. 1 job(s) wait for a working key.',
    );
  });
});
