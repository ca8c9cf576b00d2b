import { Option, type Command } from 'commander';

/** `crm-sync sandbox <service|hubspot|salesforce>`: local stand-ins for the real APIs. */
export function registerSandbox(program: Command): void {
  const sandbox = program
    .command('sandbox')
    .description('Run a local sandbox of the Service, HubSpot or Salesforce');
  sandbox
    .command('service')
    .description('Serve the Service API (spec + CONTRACT.md) with seeded calls, limits and signed webhooks')
    .option('--port <port>', 'port to listen on (0 = any free port)', '0')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--plan <plan>', 'rate plan to enforce: sales | team | enterprise', 'sales')
    .option('--api-key <key>', 'API key to accept', 'sandbox-key')
    .option('--webhook-url <url>', 'where to deliver signed webhooks')
    .option('--webhook-secret <secret>', 'webhook signing secret', 'sandbox-webhook-secret')
    .option('--seed <n>', 'number of seeded calls', '25')
    .addOption(faultOption('--fault-rate <r>', 'share of requests answered 500/502/503 (0..1)', 'FAULT_RATE'))
    .addOption(faultOption('--latency-ms <ms>', 'added latency per request', 'LATENCY_MS'))
    .addOption(faultOption('--drop-rate <r>', 'share of connections cut before or mid-answer', 'DROP_RATE'))
    .addOption(faultOption('--stall-rate <r>', 'share of requests held for --stall-ms first', 'STALL_RATE'))
    .addOption(faultOption('--stall-ms <ms>', 'length of a stall (default 20000)', 'STALL_MS'))
    .addOption(faultOption('--throttle-rate <r>', 'share answered 429 with Retry-After', 'THROTTLE_RATE'))
    .addOption(faultOption('--fault-seed <n>', 'seed of the fault draws', 'FAULT_SEED'))
    .action(async (opts) => {
      const { runServiceSandbox } = await loadSandbox(() => import('../../sandbox/service/main.js'));
      await runServiceSandbox(opts);
    });
  sandbox
    .command('hubspot')
    .description('Serve the parts of the HubSpot CRM API crm-sync uses, with seeded records')
    .option('--port <port>', 'port to listen on (0 = any free port)', '0')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .action(async (opts) => {
      const { runHubSpotSandbox } = await loadSandbox(() => import('../../sandbox/hubspot/main.js'));
      await runHubSpotSandbox(opts);
    });
  sandbox
    .command('salesforce')
    .description('Serve the parts of the Salesforce REST API crm-sync uses, with seeded records')
    .option('--port <port>', 'port to listen on (0 = any free port)', '0')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .action(async (opts) => {
      const { runSalesforceSandbox } = await loadSandbox(() => import('../../sandbox/salesforce/main.js'));
      await runSalesforceSandbox(opts);
    });
}

/** Fault settings also come from SANDBOX_SERVICE_<NAME> variables, for scripts that start the sandbox. */
function faultOption(flags: string, description: string, envName: string): Option {
  return new Option(flags, description).env(`SANDBOX_SERVICE_${envName}`);
}

/** The Docker image leaves the sandboxes out (test stand-ins); say so instead of a bare import error. */
async function loadSandbox<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND';
    if (missing && /[\\/]sandbox[\\/]/.test((err as Error).message)) {
      throw new Error(
        'the sandboxes are not part of this installation (the Docker image leaves them out); run them from a source checkout',
        { cause: err },
      );
    }
    throw err;
  }
}
