/**
 * Two worker processes on one PostgreSQL database, sharing the queue and the Service budget. The
 * poll leader is killed with -9 in the middle of a poll page; the other must take the lead within
 * 60 s (the lease is DEFAULT_LEASE_MS), every call must still be written exactly once, and the
 * Service must never see more requests in a second or a minute than the plan allows.
 */
import { DEFAULT_LEASE_MS } from '../../src/store/leaderLease.js';
import { waitFor } from '../../test/e2e/harness.js';
import { CallLoad } from '../lib/load.js';
import { startChaosWorker, type ChaosWorker } from '../lib/processes.js';
import { planLimits, startStack } from '../lib/stack.js';
import { MomentTaps } from '../lib/taps.js';
import { checkSettledOnHubSpot } from '../lib/verify.js';
import { Verdict, type Scenario, type ScenarioContext } from '../scenario.js';

/** The promise: leadership moves within a minute of the leader's death. */
const TAKEOVER_LIMIT_MS = 60_000;
const PLAN = 'sales';
/**
 * A poll page is paid at backfill priority, after live and write-back requests, so with the plan
 * busy the leader's next page can be a while coming.
 */
const POLL_WAIT_MS = 45_000;

export const replicasScenario: Scenario = {
  name: 'replicas',
  description:
    'two workers on one PostgreSQL; the poll leader killed -9 mid-poll; leadership moves, nothing written twice, one budget',
  budgetMs: 200_000,
  run: runReplicas,
};

async function isLeader(worker: ChaosWorker): Promise<boolean> {
  return (await worker.status()).worker?.pollLeader === true;
}

async function runReplicas(ctx: ScenarioContext) {
  const verdict = new Verdict();
  const stack = await startStack(ctx, { database: 'postgres', plan: PLAN, pollSchedule: '*/5 * * * * *' });
  const workers: ChaosWorker[] = [];
  try {
    const taps = new MomentTaps(stack.svc, stack.hs);
    const first = await startChaosWorker(await stack.env(), { dir: ctx.dir, label: 'replica-a' });
    workers.push(first);
    await waitFor('a poll leader', () => isLeader(first), { timeoutMs: 20_000, intervalMs: 250 });
    const second = await startChaosWorker(await stack.env(), { dir: ctx.dir, label: 'replica-b' });
    workers.push(second);
    const [leader, follower] = (await isLeader(second)) ? [second, first] : [first, second];
    // Webhooks go to the replica that survives, so intake is not what this scenario measures.
    stack.svc.state.settings.webhookUrl = `${follower.url}/webhooks`;

    const load = new CallLoad(stack.svc, ctx.random, { calls: 24, pollOnlyShare: 0.4 });
    const loading = load.run(ctx.signal);
    // Mid-run: once a few calls exist, at the leader's next poll page.
    await waitFor('calls to arrive', () => load.callIds.length >= 8, { timeoutMs: 60_000, intervalMs: 250 });
    let killedAt = 0;
    const atPoll = await taps.next(
      'poll-page',
      () => {
        killedAt = Date.now();
        void leader.kill9();
      },
      POLL_WAIT_MS,
    );
    if (!atPoll) {
      killedAt = Date.now();
      await leader.kill9();
    }
    await leader.exited;
    ctx.log(`leader killed ${atPoll ? 'mid-poll' : '(no poll came)'}; waiting for the other to lead`);
    let movedMs = Number.NaN;
    try {
      await waitFor('the follower to lead', () => isLeader(follower), {
        timeoutMs: DEFAULT_LEASE_MS + TAKEOVER_LIMIT_MS,
        intervalMs: 250,
      });
      movedMs = Date.now() - killedAt;
    } catch {
      // Reported below as a failure.
    }
    verdict.figure('leader moved', Number.isNaN(movedMs) ? 'never' : `${(movedMs / 1000).toFixed(1)} s`);
    verdict.check(
      movedMs <= TAKEOVER_LIMIT_MS,
      `leadership took ${Number.isNaN(movedMs) ? 'forever' : `${movedMs} ms`}, over 60 s`,
    );
    // Mid-poll is preferred, not required: on a busy plan the poll waits behind other requests.
    verdict.figure('killed', atPoll ? 'mid-poll' : 'mid-run (no poll page came)');

    await loading;
    await checkSettledOnHubSpot(
      verdict,
      { worker: follower, svc: stack.svc, hs: stack.hs, callIds: load.callIds },
      { timeoutMs: 100_000, signal: ctx.signal },
    );
    const limits = planLimits(PLAN);
    const counters = stack.svc.state.countersSnapshot();
    verdict.figure('plan', `${limits.burstPerSecond}/s,${limits.ratePerMinute}/min`);
    verdict.check(
      counters.maxInAnySecond <= limits.burstPerSecond && counters.maxInAnyMinute <= limits.ratePerMinute,
      `the shared budget was exceeded: ${counters.maxInAnySecond}/s, ${counters.maxInAnyMinute}/min`,
    );
    return verdict.result();
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await stack.close();
  }
}
