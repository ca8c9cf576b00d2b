import { crmFaultOptions, toNumber } from '../cliOptions.js';
import { runUntilSignal } from '../runUntilSignal.js';
import { startHubSpotSandbox } from './index.js';

/** `crm-sync-sandbox hubspot`: serves the sandbox until SIGINT/SIGTERM. */
export async function runHubSpotSandbox(opts: Record<string, string | undefined>): Promise<void> {
  const port = Number(opts.port ?? '0');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid --port ${opts.port}`);
  const sandbox = await startHubSpotSandbox({
    port,
    host: opts.host ?? '127.0.0.1',
    limits: {
      perWindow: Math.max(1, Math.floor(toNumber('per-window', opts.perWindow, 100))),
      windowMs: Math.max(1, toNumber('window-ms', opts.windowMs, 10_000)),
    },
    ...crmFaultOptions(opts),
    ...(opts.tokenTtlMs !== undefined && {
      oauth: { accessTokenTtlMs: toNumber('token-ttl-ms', opts.tokenTtlMs, 0) },
    }),
  });
  // The sandbox token is a local stand-in, printed so the operator can configure crm-sync with it.
  console.log(`hubspot sandbox listening on ${sandbox.url} (token ${sandbox.accessToken})`);
  console.log(`oauth client id ${sandbox.oauth.clientId} (secret and refresh token: the sandbox defaults)`);
  await runUntilSignal(sandbox);
}
