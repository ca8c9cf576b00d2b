/**
 * `crm-sync-sandbox service`: runs the Service sandbox until SIGINT/SIGTERM. The first stdout line
 * is `service sandbox listening on http://HOST:PORT (...)`, which scripts parse for the URL.
 */
import { PLAN_NAMES, type PlanName } from './plans.js';
import { NO_FAULTS } from './faults.js';
import { startServiceSandbox } from './index.js';
import { seededRandom } from './rng.js';
import { toNumber } from '../cliOptions.js';
import { runUntilSignal } from '../runUntilSignal.js';

const DEFAULT_API_KEY = 'sandbox-key';

export async function runServiceSandbox(opts: Record<string, string>): Promise<void> {
  const plan = (opts.plan ?? 'sales') as PlanName;
  if (!PLAN_NAMES.includes(plan)) throw new Error(`--plan must be one of ${PLAN_NAMES.join(', ')}`);
  const apiKey = opts.apiKey ?? DEFAULT_API_KEY;
  const sandbox = await startServiceSandbox({
    port: toNumber('port', opts.port, 0, 65535),
    host: opts.host ?? '127.0.0.1',
    plan,
    apiKey,
    ...(opts.webhookUrl && { webhookUrl: opts.webhookUrl }),
    ...(opts.webhookSecret && { webhookSecret: opts.webhookSecret }),
    // The CLI's --seed is the number of seeded calls.
    seedCalls: Math.floor(toNumber('seed', opts.seed, 25, 100_000)),
    ...(opts.faultSeed !== undefined && {
      random: seededRandom(Math.floor(toNumber('fault-seed', opts.faultSeed, 0))),
    }),
    faults: {
      errorRate: toNumber('fault-rate', opts.faultRate, 0, 1),
      latencyMs: toNumber('latency-ms', opts.latencyMs, 0),
      dropRate: toNumber('drop-rate', opts.dropRate, 0, 1),
      stallRate: toNumber('stall-rate', opts.stallRate, 0, 1),
      stallMs: toNumber('stall-ms', opts.stallMs, NO_FAULTS.stallMs),
      throttleRate: toNumber('throttle-rate', opts.throttleRate, 0, 1),
    },
  });
  // The default key is public knowledge; a key given on the command line is not echoed.
  const keyNote = apiKey === DEFAULT_API_KEY ? `api key ${apiKey}` : 'api key from --api-key';
  console.log(`service sandbox listening on ${sandbox.url} (plan ${plan}, ${keyNote})`);
  console.log(`admin API at ${sandbox.url}/_admin (counters, calls, faults, webhooks/replay, config)`);

  await runUntilSignal(sandbox);
  console.log('service sandbox stopped');
}
