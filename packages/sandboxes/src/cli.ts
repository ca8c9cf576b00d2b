import { Command, Option } from 'commander';

/**
 * `crm-sync-sandbox <service|hubspot|salesforce>`: local stand-ins for the real APIs. Each sandbox
 * is loaded only when asked for.
 */
export function sandboxProgram(): Command {
  const sandbox = new Command('crm-sync-sandbox').description(
    'Run a local sandbox of the Service, HubSpot or Salesforce',
  );
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
    .addOption(
      envOption('SERVICE', '--fault-rate <r>', 'share of requests answered 500/502/503 (0..1)', 'FAULT_RATE'),
    )
    .addOption(envOption('SERVICE', '--latency-ms <ms>', 'added latency per request', 'LATENCY_MS'))
    .addOption(
      envOption('SERVICE', '--drop-rate <r>', 'share of connections cut before or mid-answer', 'DROP_RATE'),
    )
    .addOption(
      envOption('SERVICE', '--stall-rate <r>', 'share of requests held for --stall-ms first', 'STALL_RATE'),
    )
    .addOption(envOption('SERVICE', '--stall-ms <ms>', 'length of a stall (default 20000)', 'STALL_MS'))
    .addOption(
      envOption('SERVICE', '--throttle-rate <r>', 'share answered 429 with Retry-After', 'THROTTLE_RATE'),
    )
    .addOption(envOption('SERVICE', '--fault-seed <n>', 'seed of the fault draws', 'FAULT_SEED'))
    .action(async (opts) => {
      const { runServiceSandbox } = await import('./service/main.js');
      await runServiceSandbox(opts);
    });
  const hubspot = sandbox
    .command('hubspot')
    .description('Serve the parts of the HubSpot CRM API crm-sync uses, with seeded records')
    .option('--port <port>', 'port to listen on (0 = any free port)', '0')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .addOption(
      envOption('HUBSPOT', '--per-window <n>', 'requests per rate window (default 100)', 'PER_WINDOW'),
    )
    .addOption(envOption('HUBSPOT', '--window-ms <ms>', 'rate window length (default 10000)', 'WINDOW_MS'));
  crmFaultOptions(hubspot, 'HUBSPOT', '429 TEN_SECONDLY_ROLLING').action(async (opts) => {
    const { runHubSpotSandbox } = await import('./hubspot/main.js');
    await runHubSpotSandbox(opts);
  });
  const salesforce = sandbox
    .command('salesforce')
    .description('Serve the parts of the Salesforce REST API crm-sync uses, with seeded records')
    .option('--port <port>', 'port to listen on (0 = any free port)', '0')
    .option('--host <host>', 'address to bind', '127.0.0.1');
  crmFaultOptions(salesforce, 'SALESFORCE', '403 REQUEST_LIMIT_EXCEEDED (concurrent)').action(
    async (opts) => {
      const { runSalesforceSandbox } = await import('./salesforce/main.js');
      await runSalesforceSandbox(opts);
    },
  );
  return sandbox;
}

/** Fault settings also come from SANDBOX_<SANDBOX>_<NAME> variables, for scripts that start a sandbox. */
function envOption(sandbox: string, flags: string, description: string, envName: string): Option {
  return new Option(flags, description).env(`SANDBOX_${sandbox}_${envName}`);
}

/** The chaos options both CRM sandboxes share. */
function crmFaultOptions(command: Command, sandbox: 'HUBSPOT' | 'SALESFORCE', limitName: string): Command {
  return command
    .addOption(envOption(sandbox, '--rate-limit-rate <r>', `share answered ${limitName}`, 'RATE_LIMIT_RATE'))
    .addOption(envOption(sandbox, '--error-rate <r>', 'share answered 500/502/503', 'ERROR_RATE'))
    .addOption(envOption(sandbox, '--fault-seed <n>', 'seed of the fault draws', 'FAULT_SEED'))
    .addOption(envOption(sandbox, '--token-ttl-ms <ms>', 'lifetime of issued access tokens', 'TOKEN_TTL_MS'));
}
