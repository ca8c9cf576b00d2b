import { describe, expect, it } from 'vitest';
import { startSandboxCli } from '../support/sandboxCli.js';

describe('crm-sync-sandbox salesforce: chaos options', () => {
  it('answers REQUEST_LIMIT_EXCEEDED at the rate SANDBOX_SALESFORCE_RATE_LIMIT_RATE sets', async () => {
    const sandbox = await startSandboxCli(['salesforce', '--port', '0', '--token-ttl-ms', '60000'], {
      SANDBOX_SALESFORCE_RATE_LIMIT_RATE: '1',
    });
    try {
      const token = /\(token (\S+)\)/.exec(sandbox.firstLine)?.[1];
      const res = await fetch(`${sandbox.url}/services/data/v62.0/limits`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual([
        {
          errorCode: 'REQUEST_LIMIT_EXCEEDED',
          message: 'ConcurrentRequests (Concurrent API Requests) Limit exceeded.',
        },
      ]);
      const rates = (await (await fetch(`${sandbox.url}/_admin/fault-rates`)).json()) as Record<
        string,
        unknown
      >;
      expect(rates).toMatchObject({ rates: { rateLimitRate: 1, errorRate: 0 }, injected: { rate_limit: 1 } });
    } finally {
      expect(await sandbox.stop()).toBe(0);
    }
  });
});
