import { describe, expect, it } from 'vitest';
import { startSandboxCli } from '../support/sandboxCli.js';

describe('crm-sync-sandbox hubspot: chaos options', () => {
  it('takes fault rates from flags and SANDBOX_HUBSPOT_* variables and answers 5xx at them', async () => {
    const sandbox = await startSandboxCli(['hubspot', '--port', '0', '--rate-limit-rate', '0'], {
      SANDBOX_HUBSPOT_ERROR_RATE: '1',
      SANDBOX_HUBSPOT_WINDOW_MS: '1000',
    });
    try {
      const rates = (await (await fetch(`${sandbox.url}/_admin/fault-rates`)).json()) as Record<
        string,
        unknown
      >;
      expect(rates.rates).toEqual({ rateLimitRate: 0, errorRate: 1, actedShare: 0.5 });
      const res = await fetch(`${sandbox.url}/crm/objects/2026-09/contacts?limit=1`, {
        headers: { authorization: 'Bearer pat-na1-sandbox-token' },
      });
      expect([500, 502, 503]).toContain(res.status);
      expect(res.headers.get('x-hubspot-ratelimit-interval-milliseconds')).toBe('1000');
    } finally {
      expect(await sandbox.stop()).toBe(0);
    }
  });
});
