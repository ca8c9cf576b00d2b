/**
 * Two worker processes on one PostgreSQL database at full load against one HubSpot app whose
 * ten-second limit the load needs (40 per 10 s, as `npx crm-sync-sandbox hubspot --per-window 40`).
 * HubSpot's limits are per app and per account (issue 22, defect 4), so the replicas share one CRM
 * budget through the database: HubSpot must answer no 429, and the busiest ten seconds must use at
 * least 80 % of the limit (the budget is shared, not split in halves). Webhooks go to each replica
 * in turn, so both look participants up live and write calls back.
 */
import { startWebhookRelay, type WebhookRelay } from '../lib/webhookRelay.js';
import { CallLoad } from '../lib/load.js';
import { startChaosWorker, type ChaosWorker } from '../lib/processes.js';
import { startStack } from '../lib/stack.js';
import { checkSettledOnHubSpot } from '../lib/verify.js';
import { Verdict, type Scenario, type ScenarioContext } from '../scenario.js';

/** HubSpot's ten-second window, as the sandbox enforces it. */
const PER_WINDOW = 40;
const WINDOW_MS = 10_000;
/** The share of the window the busiest ten seconds must use. */
const USED_AT_LEAST = 0.8;

export function twoReplicaCrmScenario(options: { calls: number; budgetMs: number }): Scenario {
  return {
    name: 'two-replica-crm',
    description: `two workers on one PostgreSQL at full load, HubSpot at ${PER_WINDOW} per 10 s: no HubSpot 429, >= ${USED_AT_LEAST * 100} % of the window used, every call written once`,
    budgetMs: options.budgetMs,
    run: (ctx) => runTwoReplicaCrm(ctx, options.calls),
  };
}

/** The most requests HubSpot counted in any window (searches have a limit of their own). */
function busiestWindow(records: { path: string; at: number; status: number }[]): number {
  const at = records
    .filter((r) => !r.path.endsWith('/search'))
    .map((r) => r.at)
    .sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; j < at.length; j++) {
    while (at[j]! - at[i]! >= WINDOW_MS) i++;
    most = Math.max(most, j - i + 1);
  }
  return most;
}

async function runTwoReplicaCrm(ctx: ScenarioContext, calls: number) {
  const verdict = new Verdict();
  const stack = await startStack(ctx, {
    database: 'postgres',
    plan: 'team',
    // The Service is not what binds here: HubSpot is.
    service: { limits: { ratePerMinute: 6_000, burstPerSecond: 200, dailyCap: null } },
    hubspot: { limits: { perWindow: PER_WINDOW, windowMs: WINDOW_MS } },
    pollSchedule: '*/5 * * * * *',
  });
  const workers: ChaosWorker[] = [];
  let relay: WebhookRelay | undefined;
  try {
    const env = {
      SERVICE_PLAN: 'enterprise',
      SERVICE_RATE_PER_MINUTE: '6000',
      SERVICE_BURST_PER_SECOND: '200',
      SERVICE_DAILY_CAP: 'unlimited',
    };
    for (const label of ['replica-a', 'replica-b']) {
      workers.push(await startChaosWorker(await stack.env(env), { dir: ctx.dir, label }));
    }
    let turn = 0;
    relay = await startWebhookRelay(() => workers[turn++ % workers.length]!.url);
    stack.svc.state.settings.webhookUrl = `${relay.url}/webhooks`;

    const load = new CallLoad(stack.svc, ctx.random, { calls, pollOnlyShare: 0.2, stepMs: [40, 160] });
    await load.run(ctx.signal);
    await checkSettledOnHubSpot(
      verdict,
      { worker: workers[0]!, svc: stack.svc, hs: stack.hs, callIds: load.callIds },
      { timeoutMs: 150_000, signal: ctx.signal },
    );

    const records = stack.hs.state.requests.records;
    const most = busiestWindow(records);
    verdict.figure('HubSpot requests', records.length);
    verdict.figure('busiest 10 s', `${most}/${PER_WINDOW} (${Math.round((100 * most) / PER_WINDOW)} %)`);
    verdict.figure('search 429s', stack.hs.state.limits.rejected.SECONDLY);
    verdict.check(
      most >= USED_AT_LEAST * PER_WINDOW,
      `the busiest ten seconds used ${most} of ${PER_WINDOW}: the load did not need the limit, or the budget was split`,
    );
    return verdict.result();
  } finally {
    stack.svc.state.settings.webhookUrl = undefined;
    await relay?.close();
    await Promise.all(workers.map((w) => w.stop()));
    await stack.close();
  }
}
