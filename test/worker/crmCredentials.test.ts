import { describe, expect, it } from 'vitest';
import { credentialAdvice } from '../../src/crm/credentials.js';
import { CrmAuthError, CrmTransientError } from '../../src/crm/errors.js';
import { createLogger } from '../../src/log/logger.js';
import type { Db } from '../../src/store/database.js';
import { enqueueJob } from '../../src/store/jobEnqueue.js';
import { claimJobs, rescheduleJob } from '../../src/store/jobQueue.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { createCrmCredentialMonitor, PROBE_EVERY_MS } from '../../src/worker/crmCredentials.js';
import { useMigratedDatabase } from '../store/helpers.js';

const TOKEN = 'pat-na1-secret-token-value';
const config = {
  crm: 'hubspot' as const,
  hubspot: { baseUrl: 'http://127.0.0.1:1', accessToken: TOKEN },
  salesforce: { loginUrl: 'x', apiVersion: '62.0' },
};

/** A job that met CRM_AUTH and waits the five-minute fallback. */
async function heldJob(db: Db, key: string, now: Date): Promise<number> {
  await enqueueJob(db, { kind: 'context', key, priority: 300, now });
  const [job] = await claimJobs(db, { workerId: 'w', limit: 1, leaseMs: 60_000, now });
  const runAt = new Date(now.getTime() + 5 * 60_000);
  await rescheduleJob(db, { id: job!.id, workerId: 'w', runAt, now, lastError: 'CRM_AUTH: rejected' });
  return job!.id;
}

function monitorWith(db: Db, clock: FakeClock, check: () => Promise<void>) {
  const lines: string[] = [];
  const gauge: number[] = [];
  let released = 0;
  const monitor = createCrmCredentialMonitor({
    db,
    advice: credentialAdvice(config),
    check,
    clock,
    logger: createLogger({ level: 'debug' }, { write: (l: string) => void lines.push(l) }),
    setGauge: (ok) => gauge.push(ok),
    onReleased: () => released++,
  });
  return { monitor, lines, gauge, released: () => released };
}

describe('CRM credential monitor', () => {
  const current = useMigratedDatabase('embedded');

  it('fails readiness while rejected, probes every 30 s, and releases held jobs at once when accepted', async () => {
    const db = current().db.prisma;
    const clock = new FakeClock();
    let answer: Error | null = new CrmAuthError('HubSpot rejected the credentials', 'hubspot', 401);
    let probes = 0;
    const { monitor, lines, gauge, released } = monitorWith(db, clock, async () => {
      probes++;
      if (answer) throw answer;
    });
    monitor.start();
    await monitor.probe(); // the one start() began
    const reason =
      'HubSpot access token rejected (401): rotate or create a HubSpot Service Key (docs/install.md, section 1) and set HUBSPOT_ACCESS_TOKEN';
    expect(monitor.readiness()).toEqual({ ok: false, detail: reason });
    expect(monitor.state()).toMatchObject({
      accepted: false,
      credential: 'HubSpot access token',
      detail: reason,
    });
    expect(gauge).toEqual([0]);
    const warn = lines.filter((l) => l.includes('"level":40'));
    expect(warn).toHaveLength(1);
    expect(warn[0]).toContain(reason);
    expect(lines.join('\n')).not.toContain(TOKEN);

    const id = await heldJob(db, 'context:c1', new Date(clock.now()));
    // A job meeting the same rejection changes nothing and starts no second probe timer.
    expect(monitor.rejected(new CrmAuthError('x', 'hubspot', 401))).toBe(reason);
    expect(clock.pending()).toBe(1);

    await clock.advance(PROBE_EVERY_MS);
    await monitor.probe();
    expect(probes).toBe(3); // start, timer, the explicit one
    // An inconclusive probe (CRM unreachable) keeps the state and keeps probing.
    answer = new CrmTransientError('down', 'hubspot', 503);
    await clock.advance(PROBE_EVERY_MS);
    expect(monitor.readiness().ok).toBe(false);
    expect(clock.pending()).toBe(1);

    answer = null;
    await clock.advance(PROBE_EVERY_MS - 1);
    expect(monitor.readiness().ok).toBe(false);
    await clock.advance(1);
    await monitor.probe();
    expect(monitor.readiness()).toEqual({ ok: true, detail: 'HubSpot access token accepted' });
    expect(gauge.at(-1)).toBe(1);
    expect(released()).toBe(1);
    const job = await db.job.findUniqueOrThrow({ where: { id: BigInt(id) } });
    expect(job.runAt.getTime()).toBe(clock.now());
    expect(clock.pending()).toBe(0);
    await monitor.stop();
  });

  it('at start, with working credentials, makes jobs an earlier run held back due at once', async () => {
    const db = current().db.prisma;
    const clock = new FakeClock(Date.UTC(2026, 1, 1));
    const id = await heldJob(db, 'context:c2', new Date(clock.now()));
    const other = await enqueueJob(db, {
      kind: 'writeback',
      key: 'writeback:c3',
      priority: 200,
      runAt: new Date(clock.now() + 60_000),
      now: new Date(clock.now()),
    });
    const { monitor, released } = monitorWith(db, clock, async () => undefined);
    monitor.start();
    await monitor.probe();
    expect(released()).toBe(1);
    const job = await db.job.findUniqueOrThrow({ where: { id: BigInt(id) } });
    expect(job.runAt.getTime()).toBe(clock.now());
    // Jobs waiting for anything else keep their time.
    const untouched = await db.job.findUniqueOrThrow({ where: { id: BigInt(other.id) } });
    expect(untouched.runAt.getTime()).toBe(clock.now() + 60_000);
    await monitor.stop();
  });
});
