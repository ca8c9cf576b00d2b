/**
 * Two worker processes on one PostgreSQL whose clocks disagree: one 300 ms behind, one 2 s ahead
 * (chaos/fixtures/skewClock.mjs moves each process's wall clock). They saturate the `team` plan
 * against the Service sandbox, which enforces its sliding windows strictly. The shared budget,
 * leases and the UTC day go by the database's clock (issue 22, defect 3), so the Service must answer
 * no 429, and the day's count must be one row, for the database's day, covering every request the
 * Service accepted (slots granted and then not sent, in bulk or too late, stay counted: over is safe).
 */
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { CallLoad } from '../lib/load.js';
import { startChaosWorker, type ChaosWorker } from '../lib/processes.js';
import { planLimits, startStack } from '../lib/stack.js';
import { checkSettledOnHubSpot } from '../lib/verify.js';
import { Verdict, type Scenario, type ScenarioContext } from '../scenario.js';

const SKEW_FIXTURE = fileURLToPath(new URL('../fixtures/skewClock.mjs', import.meta.url));
const PLAN = 'team';
const SKEWS_MS = { 'replica-behind': -300, 'replica-ahead': 2_000 } as const;

export function clockSkewScenario(options: { calls: number; budgetMs: number }): Scenario {
  return {
    name: 'clock-skew',
    description: `two workers on one PostgreSQL, clocks ${SKEWS_MS['replica-behind']} ms and +${SKEWS_MS['replica-ahead']} ms off, the ${PLAN} plan saturated: no Service 429, one day counted right`,
    budgetMs: options.budgetMs,
    run: (ctx) => runClockSkew(ctx, options.calls),
  };
}

async function runClockSkew(ctx: ScenarioContext, calls: number) {
  const verdict = new Verdict();
  const stack = await startStack(ctx, { database: 'postgres', plan: PLAN, pollSchedule: '*/5 * * * * *' });
  const workers: ChaosWorker[] = [];
  try {
    for (const [label, skewMs] of Object.entries(SKEWS_MS)) {
      const env = await stack.env({
        NODE_OPTIONS: `--import ${SKEW_FIXTURE}`,
        CHAOS_CLOCK_SKEW_MS: String(skewMs),
      });
      workers.push(await startChaosWorker(env, { dir: ctx.dir, label }));
    }
    // Webhooks to the one ahead, polls from whichever leads: both spend the one budget.
    stack.svc.state.settings.webhookUrl = `${workers[1]!.url}/webhooks`;
    // Mostly finished calls only a poll finds: backfill that fills every window the plan has.
    const load = new CallLoad(stack.svc, ctx.random, { calls, pollOnlyShare: 0.6, stepMs: [50, 250] });
    await load.run(ctx.signal);
    await checkSettledOnHubSpot(
      verdict,
      { worker: workers[0]!, svc: stack.svc, hs: stack.hs, callIds: load.callIds },
      { timeoutMs: 240_000, signal: ctx.signal },
    );
    const limits = planLimits(PLAN);
    const counters = stack.svc.state.countersSnapshot();
    verdict.figure('plan', `${limits.burstPerSecond}/s,${limits.ratePerMinute}/min`);
    verdict.figure(
      'skews',
      Object.values(SKEWS_MS)
        .map((ms) => `${ms > 0 ? '+' : ''}${ms} ms`)
        .join(' '),
    );

    // The day's count: one row, the database's UTC day, at least what the Service accepted (a
    // slot granted and then not sent stays counted).
    const client = new pg.Client({ connectionString: stack.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ day: string; used: number; today: string }>(
        `SELECT to_char(day, 'YYYY-MM-DD') AS day, used,
                to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS today
         FROM budget_ledger WHERE ledger = 'service'`,
      );
      const used = rows.reduce((n, r) => n + r.used, 0);
      verdict.figure('day count', `${used} (Service ${counters.accepted})`);
      verdict.check(
        rows.length === 1 && rows[0]!.day === rows[0]!.today,
        `the Service budget counted days ${rows.map((r) => r.day).join(', ')}, not the database's one day`,
      );
      verdict.check(
        used >= counters.accepted,
        `the day's count ${used} is under the ${counters.accepted} requests the Service accepted`,
      );
    } finally {
      await client.end();
    }
    return verdict.result();
  } finally {
    stack.svc.state.settings.webhookUrl = undefined;
    await Promise.all(workers.map((w) => w.stop(45_000)));
    await stack.close();
  }
}
