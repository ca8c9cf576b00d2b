import type { Command } from 'commander';

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
    .option('--fault-rate <r>', 'share of requests answered 5xx (0..1)', '0')
    .option('--latency-ms <ms>', 'added latency per request', '0')
    .action(async (opts) => {
      const { runServiceSandbox } = await import('../../sandbox/service/main.js');
      await runServiceSandbox(opts);
    });
  sandbox
    .command('hubspot')
    .description('Serve the parts of the HubSpot CRM API crm-sync uses, with seeded records')
    .option('--port <port>', 'port to listen on (0 = any free port)', '0')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .action(async (opts) => {
      const { runHubSpotSandbox } = await import('../../sandbox/hubspot/main.js');
      await runHubSpotSandbox(opts);
    });
  sandbox
    .command('salesforce')
    .description('Serve the parts of the Salesforce REST API crm-sync uses, with seeded records')
    .option('--port <port>', 'port to listen on (0 = any free port)', '0')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .action(async (opts) => {
      const { runSalesforceSandbox } = await import('../../sandbox/salesforce/main.js');
      await runSalesforceSandbox(opts);
    });
}
