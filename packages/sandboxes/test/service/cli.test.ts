import { describe, expect, it } from 'vitest';
import { startSandboxCli } from '../support/sandboxCli.js';

describe('crm-sync-sandbox service', () => {
  it('prints its URL on the first line, serves, and stops cleanly on SIGTERM', async () => {
    const sandbox = await startSandboxCli(
      ['service', '--port', '0', '--plan', 'team', '--seed', '4', '--throttle-rate', '0.25'],
      { SANDBOX_SERVICE_STALL_MS: '1234' },
    );
    try {
      expect(sandbox.firstLine).toMatch(
        /^service sandbox listening on http:\/\/127\.0\.0\.1:\d+ \(plan team, api key sandbox-key\)$/,
      );
      const res = await fetch(`${sandbox.url}/v1/calls`, {
        headers: { authorization: 'Bearer sandbox-key' },
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { data: unknown[] }).data).toHaveLength(4);
      // Fault settings come from flags and SANDBOX_SERVICE_* variables.
      const faults = await (await fetch(`${sandbox.url}/_admin/faults`)).json();
      expect(faults).toMatchObject({ throttleRate: 0.25, stallMs: 1234, errorRate: 0 });
    } finally {
      expect(await sandbox.stop()).toBe(0);
    }
  });
});
