import { describe, expect, it } from 'vitest';
import { createDbInbox } from '../../src/worker/inbox.js';
import { useMigratedDatabase } from '../store/helpers.js';

/**
 * call.completed queues a delayed write-back; analysis.ready joins that job. The job must then
 * carry the analysed copy of the call, or the write-back re-reads the call from the Service.
 */
const T0 = Date.UTC(2026, 0, 5, 12);

function call(id: string, status: string) {
  return {
    id,
    status,
    created_at: '2026-01-05T11:00:00.000Z',
    duration_seconds: 1200,
    platform: 'zoom',
    participant: { name: 'Jane Doe', email: 'jane.doe@acme.example', company: 'Acme Corp' },
    methodology: 'MEDDIC',
    ...(status === 'analyzed' && {
      scoring: { overall: 80, rapport: 70, discovery: 75, objection_handling: 60, closing: 65 },
    }),
  };
}

function record(n: number, type: string, data: Record<string, unknown>, receivedAt: number) {
  const rawBody = JSON.stringify({
    id: `evt_${n}`,
    type,
    created_at: new Date(receivedAt).toISOString(),
    data,
  });
  return {
    eventId: `evt_${n}`,
    type,
    callId: String(data.call_id),
    rawBody,
    outcome: 'accepted' as const,
    receivedAt,
  };
}

describe('a later event refreshes the call on the queued write-back', () => {
  const database = useMigratedDatabase('embedded');

  async function writebackJob(callId: string) {
    const rows = await database().db.prisma.job.findMany({ where: { key: `writeback:${callId}` } });
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    return { runAt: row.runAt.getTime(), call: (row.payload as { call?: { status?: string } | null }).call };
  }

  it('analysis.ready puts its analysed copy on the job call.completed queued, and runs it now', async () => {
    const inbox = createDbInbox({ db: database().db.prisma, crm: 'hubspot' });
    await inbox.store(
      record(1, 'call.completed', { call_id: 'call_a', call: call('call_a', 'completed') }, T0),
    );
    expect((await writebackJob('call_a')).call?.status).toBe('completed');

    await inbox.store(
      record(2, 'analysis.ready', { call_id: 'call_a', call: call('call_a', 'analyzed') }, T0 + 1_000),
    );
    const job = await writebackJob('call_a');
    expect(job.call?.status).toBe('analyzed');
    expect(job.runAt).toBe(T0 + 1_000);
  });

  it('an event without an analysed call leaves the queued copy alone', async () => {
    const inbox = createDbInbox({ db: database().db.prisma, crm: 'hubspot' });
    await inbox.store(
      record(3, 'analysis.ready', { call_id: 'call_b', call: call('call_b', 'analyzed') }, T0),
    );
    // A late retry of call.completed (older copy), then a follow-up event that carries no call.
    await inbox.store(
      record(4, 'call.completed', { call_id: 'call_b', call: call('call_b', 'completed') }, T0 + 1),
    );
    await inbox.store(
      record(
        5,
        'followup.generated',
        { call_id: 'call_b', followup: { id: 'fu_1', subject: 's', body: 'b' } },
        T0 + 2,
      ),
    );
    expect((await writebackJob('call_b')).call?.status).toBe('analyzed');
  });
});
