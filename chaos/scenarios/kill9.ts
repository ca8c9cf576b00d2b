/**
 * kill -9 at moments taken from the worker's own work (a webhook in flight, a HubSpot batch write,
 * a follow-up generation, a poll page), restarted each time, while calls arrive and webhooks are
 * replayed duplicated and shuffled. Then, after a bounded wait for quiescence: every call written
 * back once with the Service's scores, follow-ups generated at most once, every draft attached,
 * no 429.
 */
import type { DatabaseKind } from '../../src/store/database.js';
import { pick, shuffled } from '@crm-sync/sandboxes/service/rng';
import { DEFAULT_LEASE_MS } from '../../src/store/leaderLease.js';
import { Verdict, type Scenario, type ScenarioContext } from '../scenario.js';
import { CallLoad } from '../lib/load.js';
import { startChaosWorker, type ChaosWorker } from '../lib/processes.js';
import { startStack } from '../lib/stack.js';
import { MOMENTS, MomentTaps, type Moment } from '../lib/taps.js';
import { checkNo429, checkWrittenOnce, unquiet, waitQuiescent } from '../lib/verify.js';

export interface Kill9Options {
  name: string;
  database: DatabaseKind;
  kills: number;
  calls: number;
  budgetMs: number;
}

/** How long a chosen moment may take to come before any moment will do. */
const MOMENT_WAIT_MS = 8_000;
/**
 * A poll page after a kill comes only once the dead leader's poll lease has lapsed and the new
 * worker's next poll is due (every 5 s here): wait that long for it, or no kill would ever land on one.
 */
const POLL_MOMENT_WAIT_MS = DEFAULT_LEASE_MS + 15_000;
/**
 * Quiescence bound after the last kill: jobs a killed worker had claimed on PostgreSQL wait out
 * their 60 s claim lease (another replica may still hold them), then run.
 */
const QUIESCENCE_MS = 100_000;

export function kill9Scenario(options: Kill9Options): Scenario {
  return {
    name: options.name,
    description: `${options.kills} x kill -9 mid-work on ${options.database === 'postgres' ? 'PostgreSQL' : 'the embedded database'}, calls arriving, webhooks duplicated and shuffled`,
    budgetMs: options.budgetMs,
    run: (ctx) => runKill9(ctx, options),
  };
}

async function runKill9(ctx: ScenarioContext, options: Kill9Options) {
  const started = Date.now();
  const verdict = new Verdict();
  const stack = await startStack(ctx, {
    database: options.database,
    plan: 'team',
    pollSchedule: '*/5 * * * * *',
  });
  const env = await stack.env();
  let worker: ChaosWorker | undefined;
  try {
    const taps = new MomentTaps(stack.svc, stack.hs);
    worker = await startChaosWorker(env, { dir: ctx.dir, label: 'worker' });
    stack.svc.state.settings.webhookUrl = `${worker.url}/webhooks`;
    const load = new CallLoad(stack.svc, ctx.random, { calls: options.calls });
    const loading = load.run(ctx.signal);
    const hits: Record<Moment | 'any', number> = {
      'webhook-intake': 0,
      'crm-batch-write': 0,
      'followup-generation': 0,
      'poll-page': 0,
      any: 0,
    };
    const restartMs: number[] = [];
    // Each kind of moment first (in a seeded order), then seeded picks: every kind gets its kill.
    const firsts = shuffled(ctx.random, MOMENTS);
    // Kills stop in time to leave the quiescence wait its whole bound.
    const killsEnd = started + options.budgetMs - QUIESCENCE_MS - 10_000;
    for (let i = 0; i < options.kills && Date.now() < killsEnd && !ctx.signal.aborted; i++) {
      // Somewhere into the run, not always the first moment after a restart.
      await new Promise((resolve) => setTimeout(resolve, ctx.random() * 1_500));
      const victim = worker;
      const wanted = firsts[i] ?? pick(ctx.random, MOMENTS);
      // Only the first poll-page kill waits out the lease; later ones take any moment after 8 s, so
      // the kills still fit the budget.
      const waitMs = wanted === 'poll-page' && firsts[i] ? POLL_MOMENT_WAIT_MS : MOMENT_WAIT_MS;
      if (wanted === 'webhook-intake') load.replay();
      let hit: Moment | 'any' = wanted;
      if (!(await taps.next(wanted, () => void victim.kill9(), waitMs))) {
        // The wanted moment did not come (e.g. a dead leader's poll lease): take the next of any kind.
        const any = await Promise.race(
          MOMENTS.map((m) =>
            taps.next(m, () => void victim.kill9(), MOMENT_WAIT_MS).then((ok) => (ok ? m : undefined)),
          ),
        );
        hit = any ?? 'any';
        if (!any) await victim.kill9();
      }
      hits[hit]++;
      await victim.exited;
      ctx.log(`kill ${i + 1}/${options.kills} at ${hit}`);
      const started = Date.now();
      worker = await startChaosWorker(env, { dir: ctx.dir, label: 'worker' });
      restartMs.push(Date.now() - started);
    }
    const kills = Object.values(hits).reduce((a, b) => a + b, 0);
    verdict.figure('kills', kills);
    verdict.figure(
      'at',
      `intake ${hits['webhook-intake']}/write ${hits['crm-batch-write']}/follow-up ${hits['followup-generation']}/poll ${hits['poll-page']}/other ${hits.any}`,
    );
    verdict.check(kills === options.kills, `only ${kills}/${options.kills} kills fitted in the budget`);
    const missed = MOMENTS.filter((m) => hits[m] === 0);
    verdict.check(
      options.kills < MOMENTS.length || missed.length === 0,
      `no kill landed during: ${missed.join(', ')}`,
    );
    await loading;
    const { states, ms, quiet, jobs } = await waitQuiescent(worker, load.callIds, {
      timeoutMs: Math.min(QUIESCENCE_MS, started + options.budgetMs - 5_000 - Date.now()),
      signal: ctx.signal,
    });
    verdict.figure('calls', load.callIds.length);
    verdict.figure('settled in', `${(ms / 1000).toFixed(0)} s`);
    verdict.check(quiet, `not quiescent within ${QUIESCENCE_MS / 1000} s: ${unquiet(states, jobs)}`);
    checkWrittenOnce(verdict, { svc: stack.svc, hs: stack.hs, callIds: load.callIds, states });
    checkNo429(verdict, stack.svc, stack.hs);
    verdict.figure('replays', load.replays);
    verdict.figure(
      'restart',
      `${(restartMs.reduce((a, b) => a + b, 0) / Math.max(1, restartMs.length) / 1000).toFixed(1)} s avg`,
    );
    verdict.figure('webhooks abandoned', stack.svc.state.countersSnapshot().webhooks.abandoned);
    return verdict.result();
  } finally {
    await worker?.stop();
    await stack.close();
  }
}
