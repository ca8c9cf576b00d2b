import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config/config.js';
import { redactConfig } from '../../src/config/redact.js';

const base = {
  CONFIG_DIR: '/nonexistent-crm-sync-config',
  SERVICE_API_BASE_URL: 'http://127.0.0.1:1234',
  SERVICE_API_KEY: 'key-123',
  SERVICE_WEBHOOK_SECRET: 'whsec-456',
};

function problemsOf(env: Record<string, string>, require = { service: true, crm: true }): string[] {
  try {
    parseConfig(env, { require });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('configuration', () => {
  it('applies plan presets and overrides', () => {
    const c = parseConfig({ ...base, SERVICE_PLAN: 'team', SERVICE_DAILY_CAP: '777' });
    expect(c.service.limits).toEqual({ ratePerMinute: 120, burstPerSecond: 20, dailyCap: 777 });
    expect(c.http.port).toBe(8080);
    expect(c.crm).toBe('hubspot');
  });

  it('names a bad variable and what it expects', () => {
    const problems = problemsOf({ ...base, SERVICE_PLAN: 'gold', PORT: 'eighty', HUBSPOT_ACCESS_TOKEN: 't' });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^SERVICE_PLAN: expected one of sales \| team \| enterprise \(got "gold"\)/),
        expect.stringMatching(/^PORT: expected a port number/),
      ]),
    );
  });

  it('lists every missing HubSpot credential in one message', () => {
    const problems = problemsOf({ ...base, CRM: 'hubspot', HUBSPOT_CLIENT_ID: 'cid' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('HUBSPOT_ACCESS_TOKEN');
    expect(problems[0]).toContain('HUBSPOT_CLIENT_SECRET, HUBSPOT_REFRESH_TOKEN');
  });

  it('requires custom limits for the enterprise plan', () => {
    expect(problemsOf({ ...base, SERVICE_PLAN: 'enterprise', HUBSPOT_ACCESS_TOKEN: 't' }).join('\n')).toMatch(
      /SERVICE_RATE_PER_MINUTE/,
    );
    const c = parseConfig({
      ...base,
      SERVICE_PLAN: 'enterprise',
      SERVICE_RATE_PER_MINUTE: '600',
      SERVICE_BURST_PER_SECOND: '50',
    });
    expect(c.service.limits.dailyCap).toBeNull();
  });

  it('never echoes a secret value in an error', () => {
    const problems = problemsOf({
      ...base,
      SERVICE_API_KEY: 'x'.repeat(3),
      SERVICE_API_BASE_URL: 'not a url',
    });
    expect(problems.join('\n')).not.toContain('key-123');
    expect(problems.join('\n')).toMatch(/SERVICE_API_BASE_URL: expected an http\(s\) URL/);
  });

  it('redacts secrets when printed', () => {
    const c = parseConfig({
      ...base,
      HUBSPOT_ACCESS_TOKEN: 'pat-secret',
      DATABASE_URL: 'postgres://u:pw@h/db',
    });
    const printed = JSON.stringify(redactConfig(c));
    for (const secret of ['key-123', 'whsec-456', 'pat-secret', ':pw@'])
      expect(printed).not.toContain(secret);
    expect(printed).toContain('postgres://u:[redacted]@h/db');
  });
});
