/**
 * The database connection cut for 15 s mid-run, through a TCP proxy the scenario controls (the
 * shared PostgreSQL server is never restarted), while calls arrive and webhooks keep coming.
 * Checks: every webhook that started during the outage was answered 503 with Retry-After (never
 * 2xx, never 500 or silence), so the Service retries it; every acknowledged event is in the inbox;
 * the same worker process is ready again by itself; every call written exactly once, with its
 * drafts unless a FOLLOWUP_UNCERTAIN warning says why not.
 */
import pg from 'pg';
import { syncRow } from '../../test/e2e/harness.js';
import { followupGenerations } from '../../test/e2e/readback.js';
import { startTcpProxy } from '../../test/support/tcpProxy.js';
import { Verdict, type Scenario, type ScenarioContext } from '../scenario.js';
import { CallLoad } from '../lib/load.js';
import { startChaosWorker, type ChaosWorker } from '../lib/processes.js';
import { startStack } from '../lib/stack.js';
import { checkNo429, checkWrittenOnce, unquiet, waitQuiescent } from '../lib/verify.js';
import { startWebhookRelay, type Delivery } from '../lib/webhookRelay.js';

const OUTAGE_MS = 15_000;
/** Calls flow this long before the cut, so there is work in flight when it comes. */
const WARM_UP_MS = 8_000;
/** A delivery that began this soon before the cut may have been stored before it: not judged. */
const CUT_GRACE_MS = 250;
const QUIESCENCE_MS = 90_000;

export const dbOutageScenario: Scenario = {
  name: 'db-outage',
  description: `PostgreSQL connection cut for ${OUTAGE_MS / 1000} s mid-run through a TCP proxy, webhooks arriving throughout`,
  budgetMs: 180_000,
  run: runDbOutage,
};

async function runDbOutage(ctx: ScenarioContext) {
  const verdict = new Verdict();
  const stack = await startStack(ctx, {
    database: 'postgres',
    plan: 'team',
    pollSchedule: '*/5 * * * * *',
  });
  const direct = new URL(stack.databaseUrl!);
  const proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
  const proxied = new URL(direct);
  proxied.host = `127.0.0.1:${proxy.port}`;
  let worker: ChaosWorker | undefined;
  let relay: Awaited<ReturnType<typeof startWebhookRelay>> | undefined;
  try {
    worker = await startChaosWorker(await stack.env({ DATABASE_URL: proxied.toString() }), {
      dir: ctx.dir,
      label: 'worker',
    });
    const pid = worker.pid;
    let exited = false;
    void worker.exited.then(() => (exited = true));
    const target = worker.url;
    relay = await startWebhookRelay(() => target);
    stack.svc.state.settings.webhookUrl = `${relay.url}/webhooks`;

    const load = new CallLoad(stack.svc, ctx.random, { calls: 30, stepMs: [200, 800] });
    const loading = load.run(ctx.signal);
    await delay(WARM_UP_MS);

    const cutAt = Date.now();
    proxy.cut();
    ctx.log(`database cut for ${OUTAGE_MS / 1000} s`);
    await delay(OUTAGE_MS / 2);
    const readyDuring = await readyz(worker.url);
    await delay(OUTAGE_MS / 2);
    const restoredAt = Date.now();
    proxy.restore();
    ctx.log('database back');
    const readyAfterMs = await untilReady(worker.url, ctx.signal);
    const recovered = readyAfterMs !== null ? Date.now() - restoredAt : null;

    await loading;
    const { states, ms, quiet, jobs } = await waitQuiescent(worker, load.callIds, {
      timeoutMs: QUIESCENCE_MS,
      signal: ctx.signal,
    });

    // Webhooks that began inside the outage (and were answered before it ended).
    const during = relay.deliveries.filter(
      (d) => d.startedAt >= cutAt + CUT_GRACE_MS && d.answeredAt <= restoredAt,
    );
    const refused = during.filter((d) => d.status === 503 && Number(d.retryAfter) > 0);
    const wrong = during.filter((d) => !refused.includes(d));
    verdict.figure('outage', `${OUTAGE_MS / 1000} s`);
    verdict.figure('webhooks in outage', `${during.length} (503: ${refused.length})`);
    verdict.check(during.length > 0, 'no webhook arrived during the outage: nothing was shown');
    verdict.check(
      wrong.length === 0,
      `${wrong.length} webhook(s) in the outage not answered 503 with Retry-After: ${summarise(wrong)}`,
    );
    verdict.check(readyDuring === 503, `/readyz answered ${readyDuring} during the outage, not 503`);

    const acknowledged = new Set(
      relay.deliveries.filter((d) => d.status >= 200 && d.status < 300 && d.eventId).map((d) => d.eventId!),
    );
    const lost = await missingFromInbox(stack.databaseUrl!, acknowledged);
    verdict.figure('acked/lost', `${acknowledged.size}/${lost.length}`);
    verdict.check(lost.length === 0, `acknowledged but not in the inbox: ${lost.slice(0, 5).join(', ')}`);

    verdict.figure('ready again', recovered === null ? 'never' : `${(recovered / 1000).toFixed(1)} s`);
    verdict.check(recovered !== null, '/readyz never answered 200 again after the outage');
    verdict.check(!exited && worker.pid === pid, 'the worker exited: it did not recover by itself');

    verdict.figure('calls', load.callIds.length);
    verdict.figure('settled in', `${(ms / 1000).toFixed(0)} s`);
    verdict.check(quiet, `not quiescent within ${QUIESCENCE_MS / 1000} s: ${unquiet(states, jobs)}`);
    checkWrittenOnce(verdict, { svc: stack.svc, hs: stack.hs, callIds: load.callIds, states });
    // Drafts are not lost to the outage: a call without any has a FOLLOWUP_UNCERTAIN warning.
    const withoutDrafts = load.callIds.filter((id) => followupGenerations(stack.svc, id) === 0);
    const unexplained: string[] = [];
    for (const id of withoutDrafts) {
      const warnings = ((await syncRow(worker, id))?.warnings ?? []) as string[];
      if (!warnings.some((w) => w.startsWith('FOLLOWUP_UNCERTAIN'))) unexplained.push(id);
    }
    verdict.figure(
      'no drafts (uncertain)',
      `${withoutDrafts.length} (${withoutDrafts.length - unexplained.length})`,
    );
    verdict.check(
      unexplained.length === 0,
      `${unexplained.length} call(s) written without drafts and without FOLLOWUP_UNCERTAIN: ${unexplained.slice(0, 5).join(', ')}`,
    );
    checkNo429(verdict, stack.svc, stack.hs);
    return verdict.result();
  } finally {
    proxy.restore();
    await worker?.stop();
    await relay?.close();
    await proxy.close();
    await stack.close();
  }
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function readyz(url: string): Promise<number> {
  try {
    const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/** Polls /readyz until 200; the time it took, or null when `signal` ends the wait first. */
async function untilReady(url: string, signal: AbortSignal): Promise<number | null> {
  const started = Date.now();
  while (!signal.aborted && Date.now() - started < 60_000) {
    if ((await readyz(url)) === 200) return Date.now() - started;
    await delay(200);
  }
  return null;
}

function summarise(deliveries: Delivery[]): string {
  const byStatus: Record<string, number> = {};
  for (const d of deliveries) {
    const key = d.status === 503 ? '503 without Retry-After' : String(d.status || 'no answer');
    byStatus[key] = (byStatus[key] ?? 0) + 1;
  }
  return JSON.stringify(byStatus);
}

/** The acknowledged event ids the inbox does not hold (read around the proxy). */
async function missingFromInbox(databaseUrl: string, eventIds: Set<string>): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ event_id: string }>(
      `SELECT event_id FROM webhook_inbox WHERE event_id = ANY($1) AND outcome IN ('accepted', 'processed', 'failed')`,
      [[...eventIds]],
    );
    const stored = new Set(rows.map((r) => r.event_id));
    return [...eventIds].filter((id) => !stored.has(id));
  } finally {
    await client.end();
  }
}
