import { crmFaultOptions, toNumber } from '../cliOptions.js';
import { runUntilSignal } from '../runUntilSignal.js';
import { startSalesforceSandbox } from './index.js';

/** `crm-sync-sandbox salesforce`: serves until SIGINT/SIGTERM. */
export async function runSalesforceSandbox(opts: Record<string, string | undefined>): Promise<void> {
  const port = Number(opts.port ?? '0');
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--port: expected a port number, got ${opts.port}`);
  const sandbox = await startSalesforceSandbox({
    port,
    host: opts.host ?? '127.0.0.1',
    ...crmFaultOptions(opts),
    ...(opts.tokenTtlMs !== undefined && { tokenTtlMs: toNumber('token-ttl-ms', opts.tokenTtlMs, 0) }),
  });
  // The sandbox's own throwaway token, printed so a local worker can be pointed at it.
  console.log(`salesforce sandbox listening on ${sandbox.url} (token ${sandbox.accessToken})`);
  await runUntilSignal(sandbox);
}
