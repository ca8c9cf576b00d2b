/**
 * A rolling deploy (issue 22, defect 2): two worker processes on one PostgreSQL, the Service slow
 * (every answer 3 s late, so follow-up requests are long), and the replicas stopped (SIGTERM) and
 * started again one at a time while calls flow. A stopping worker waits for the requests it has in
 * flight (its drain bound is over the Service's request timeout) and hands back only work that has
 * started none; a run that lost its lease is fenced. So no call may be written without the drafts
 * the Service made for it, no draft may be written twice, and no call's follow-ups generated twice.
 */
import { CallLoad } from '../lib/load.js';
import { startChaosWorker, type ChaosWorker } from '../lib/processes.js';
import { startStack } from '../lib/stack.js';
import { checkSettledOnHubSpot } from '../lib/verify.js';
import { startWebhookRelay, type WebhookRelay } from '../lib/webhookRelay.js';
import { Verdict, type Scenario, type ScenarioContext } from '../scenario.js';

/** Every Service answer this late: a deploy always meets requests in flight. */
const LATENCY_MS = 3_000;
/** How long a stopping worker gets before the scenario would kill it (its own drain bound is 20 s). */
const STOP_GRACE_MS = 45_000;

export function rollingDeployScenario(options: {
  calls: number;
  restarts: number;
  budgetMs: number;
}): Scenario {
  return {
    name: 'rolling-deploy',
    description: `two workers on one PostgreSQL restarted one by one ${options.restarts} times during ${LATENCY_MS / 1000} s Service requests: no call without its drafts, no draft twice`,
    budgetMs: options.budgetMs,
    run: (ctx) => runRollingDeploy(ctx, options),
  };
}

async function runRollingDeploy(ctx: ScenarioContext, options: { calls: number; restarts: number }) {
  const verdict = new Verdict();
  const stack = await startStack(ctx, {
    database: 'postgres',
    plan: 'team',
    service: { faults: { latencyMs: LATENCY_MS } },
    pollSchedule: '*/5 * * * * *',
  });
  const workers: ChaosWorker[] = [];
  let relay: WebhookRelay | undefined;
  try {
    for (const label of ['replica-a', 'replica-b']) {
      workers.push(await startChaosWorker(await stack.env(), { dir: ctx.dir, label }));
    }
    let turn = 0;
    // Deliveries go to the replicas up now; one refused while a replica restarts is redelivered.
    relay = await startWebhookRelay(() => workers[turn++ % workers.length]!.url);
    stack.svc.state.settings.webhookUrl = `${relay.url}/webhooks`;

    const load = new CallLoad(stack.svc, ctx.random, {
      calls: options.calls,
      pollOnlyShare: 0.3,
      stepMs: [150, 500],
    });
    const loading = load.run(ctx.signal);
    let restarts = 0;
    while (restarts < options.restarts && !ctx.signal.aborted) {
      await new Promise((resolve) => setTimeout(resolve, 6_000 + ctx.random() * 6_000));
      const i = restarts % workers.length;
      const old = workers[i]!;
      const inFlight = (await old.status().catch(() => null))?.worker?.jobsInFlight ?? 0;
      ctx.log(`restarting replica ${i} (${inFlight} job(s) in flight)`);
      // The new one first, as a deployment would: the old one stops while the other serves.
      workers[i] = await startChaosWorker(await stack.env(), {
        dir: ctx.dir,
        label: `replica-${i}-r${restarts + 1}`,
      });
      const exit = await old.stop(STOP_GRACE_MS);
      verdict.check(exit.signal !== 'SIGKILL', `replica ${i} did not stop within ${STOP_GRACE_MS / 1000} s`);
      restarts++;
    }
    verdict.figure('restarts', restarts);
    await loading;
    await checkSettledOnHubSpot(
      verdict,
      { worker: workers[0]!, svc: stack.svc, hs: stack.hs, callIds: load.callIds },
      { timeoutMs: 180_000, signal: ctx.signal },
    );
    const without = Number(verdict.figures['calls without drafts'] ?? -1);
    verdict.check(without === 0, `${without} call(s) written without the drafts the Service made for them`);
    return verdict.result();
  } finally {
    stack.svc.state.settings.webhookUrl = undefined;
    await relay?.close();
    await Promise.all(workers.map((w) => w.stop(STOP_GRACE_MS)));
    await stack.close();
  }
}
