import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config/config.js';
import { limitWarnings } from '../../src/config/problems.js';
import { listenOrNameTheSetting } from '../../src/http/listen.js';
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
  it('accepts the CRM name in any case, as vendors write it, and still refuses an unknown one', () => {
    expect(parseConfig({ ...base, CRM: 'HubSpot' }).crm).toBe('hubspot');
    expect(parseConfig({ ...base, CRM: 'Salesforce' }).crm).toBe('salesforce');
    expect(problemsOf({ ...base, CRM: 'Pipedrive' }, { service: true, crm: false })).toEqual([
      'CRM: expected hubspot | salesforce (got "Pipedrive")',
    ]);
  });

  it('applies plan presets and overrides', () => {
    const c = parseConfig({ ...base, SERVICE_PLAN: 'team', SERVICE_DAILY_CAP: '777' });
    expect(c.service.limits).toEqual({ ratePerMinute: 120, burstPerSecond: 20, dailyCap: 777 });
    expect(c.http.port).toBe(8080);
    expect(c.crm).toBe('hubspot');
  });

  it('reads the drift thresholds in minutes, with defaults, 0 turning a check off', () => {
    expect(parseConfig(base).drift).toEqual({
      webhookSilenceMs: 30 * 60_000,
      analysisLagMs: 120 * 60_000,
      noMatchWindowMs: 60 * 60_000,
      noMatchRise: 0.25,
      noMatchMinCalls: 10,
    });
    const c = parseConfig({
      ...base,
      WEBHOOK_SILENCE_MINUTES: '0',
      ANALYSIS_LAG_MINUTES: '45',
      NO_MATCH_RISE: '0.4',
    });
    expect(c.drift).toMatchObject({ webhookSilenceMs: 0, analysisLagMs: 45 * 60_000, noMatchRise: 0.4 });
    expect(
      problemsOf({ ...base, HUBSPOT_ACCESS_TOKEN: 't', NO_MATCH_RISE: '25', WEBHOOK_SILENCE_MINUTES: '-1' }),
    ).toEqual([
      'WEBHOOK_SILENCE_MINUTES: expected a whole number of minutes (0 = off) (got "-1")',
      'NO_MATCH_RISE: expected a fraction between 0 and 1 (got "25")',
    ]);
  });

  it('selects the Salesforce client credentials flow from client id and secret, and asks for the My Domain login URL', () => {
    const sf = {
      ...base,
      CRM: 'salesforce',
      SALESFORCE_CLIENT_ID: 'cid',
      SALESFORCE_CLIENT_SECRET: 'top-secret-value',
    };
    // login.salesforce.com is the default: the message says why it will not do, and what to set.
    for (const login of [undefined, 'https://login.salesforce.com', 'https://TEST.salesforce.com/']) {
      const problems = problemsOf(login ? { ...sf, SALESFORCE_LOGIN_URL: login } : sf);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(
        /^SALESFORCE_LOGIN_URL: the client credentials flow .* My Domain .*my\.salesforce\.com/,
      );
      expect(problems[0]).not.toContain('top-secret-value');
    }
    const ok = { ...sf, SALESFORCE_LOGIN_URL: 'https://acme.my.salesforce.com' };
    expect(problemsOf(ok)).toEqual([]);
    // A refresh token or JWT settings keep their flows, on any login URL.
    expect(problemsOf({ ...sf, SALESFORCE_REFRESH_TOKEN: 'r' })).toEqual([]);
    expect(problemsOf({ ...sf, SALESFORCE_USERNAME: 'u@x', SALESFORCE_JWT_PRIVATE_KEY: 'k' })).toEqual([]);
    // A client id alone names no flow.
    expect(problemsOf({ ...base, CRM: 'salesforce', SALESFORCE_CLIENT_ID: 'cid' })).toEqual([
      expect.stringMatching(/^SALESFORCE_ACCESS_TOKEN: required .*client credentials flow/),
    ]);
  });

  it('takes CREDENTIALS_KEY as 32 bytes (base64 or hex), naming how to make one and never echoing it', () => {
    const good = Buffer.alloc(32, 7).toString('base64');
    expect(parseConfig({ ...base, CREDENTIALS_KEY: good }).credentialsKey).toBe(good);
    const problems = problemsOf({ ...base, HUBSPOT_ACCESS_TOKEN: 't', CREDENTIALS_KEY: 'short-secret-key' });
    expect(problems).toEqual([
      expect.stringMatching(/^CREDENTIALS_KEY: expected 32 random bytes .*openssl rand -base64 32/),
    ]);
    expect(problems[0]).not.toContain('short-secret-key');
    expect(redactConfig(parseConfig({ ...base, CREDENTIALS_KEY: good })).credentialsKey).toBe('[redacted]');
  });

  it('reads how long Salesforce requests are held after REQUEST_LIMIT_EXCEEDED (15 min unless set)', () => {
    expect(parseConfig(base).salesforce.limitPauseMs).toBe(900_000);
    expect(parseConfig({ ...base, SALESFORCE_LIMIT_PAUSE_MS: '3000' }).salesforce.limitPauseMs).toBe(3000);
    expect(problemsOf({ ...base, SALESFORCE_LIMIT_PAUSE_MS: '-1', HUBSPOT_ACCESS_TOKEN: 't' })).toEqual([
      expect.stringContaining('SALESFORCE_LIMIT_PAUSE_MS'),
    ]);
  });

  it('reads HUBSPOT_API_VERSION (2026-09 unless set) and refuses what is not a HubSpot date version', () => {
    expect(parseConfig(base).hubspot.apiVersion).toBe('2026-09');
    expect(parseConfig({ ...base, HUBSPOT_API_VERSION: '2026-03' }).hubspot.apiVersion).toBe('2026-03');
    for (const bad of ['v3', '2026-04', '2025-09', '2026-9']) {
      expect(problemsOf({ ...base, HUBSPOT_ACCESS_TOKEN: 't', HUBSPOT_API_VERSION: bad })).toEqual([
        expect.stringMatching(/^HUBSPOT_API_VERSION: expected a HubSpot date version/),
      ]);
    }
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

describe('configuration faults, all at once', () => {
  it('lists three missing and two malformed variables in one message', () => {
    const env = {
      CONFIG_DIR: '/nonexistent-crm-sync-config',
      HUBSPOT_ACCESS_TOKEN: 'pat-secret',
      PORT: 'eighty',
      POLL_SCHEDULE: 'every minute',
    };
    let error: unknown;
    try {
      parseConfig(env, { require: { service: true, crm: true } });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { problems, message } = error as ConfigError;
    expect(problems.map((p) => p.slice(0, p.indexOf(':')))).toEqual([
      'SERVICE_API_BASE_URL',
      'SERVICE_API_KEY',
      'SERVICE_WEBHOOK_SECRET',
      'PORT',
      'POLL_SCHEDULE',
    ]);
    expect(message).toMatch(/^Invalid configuration \(5 problems\):\n/);
    expect(message).toContain('PORT: expected a port number (got "eighty")');
    expect(message).toContain('POLL_SCHEDULE: expected a cron schedule');
    expect(message).toContain('expected 5 or 6 fields but got 2');
    expect(message).not.toContain('pat-secret');
  });

  it('does not also call a malformed required variable missing', () => {
    const problems = problemsOf({ ...base, SERVICE_API_BASE_URL: 'ftp://x', HUBSPOT_ACCESS_TOKEN: 't' });
    expect(problems).toEqual([expect.stringMatching(/^SERVICE_API_BASE_URL: expected an http\(s\) URL/)]);
  });

  it('names POLL_SCHEDULE and the cron field at fault', () => {
    const problems = problemsOf({ ...base, HUBSPOT_ACCESS_TOKEN: 't', POLL_SCHEDULE: '61 * * * *' });
    expect(problems).toEqual([
      expect.stringMatching(/^POLL_SCHEDULE: .*61 is a invalid expression for minute/),
    ]);
    expect(parseConfig({ ...base, POLL_SCHEDULE: '*/5 * * * *' }).pollSchedule).toBe('*/5 * * * *');
  });

  it('names HOST when it is not an address', () => {
    const problems = problemsOf({ ...base, HUBSPOT_ACCESS_TOKEN: 't', HOST: 'http://0.0.0.0:8080' });
    expect(problems).toEqual([expect.stringMatching(/^HOST: expected an IP address or host name/)]);
    for (const host of ['::', '127.0.0.1', 'worker-1.internal'])
      expect(parseConfig({ ...base, HOST: host }).http.host).toBe(host);
  });

  it('reports unknown keys of crm-sync.yaml with the closest known name', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'crm-sync-config-'));
    try {
      writeFileSync(
        path.join(dir, 'crm-sync.yaml'),
        'SERVICE_API_KY: k\nPOLL_SCHEDUEL: "* * * * *"\nservice_plan: team\nCOLOUR_SCHEME: dark\nPORT: [80]\n',
      );
      const problems = problemsOf({ ...base, CONFIG_DIR: dir, HUBSPOT_ACCESS_TOKEN: 't' });
      const file = path.join(dir, 'crm-sync.yaml');
      expect(problems).toEqual([
        `${file}: PORT: expected a plain value`,
        `${file}: unknown key SERVICE_API_KY (did you mean SERVICE_API_KEY?)`,
        `${file}: unknown key POLL_SCHEDUEL (did you mean POLL_SCHEDULE?)`,
        `${file}: unknown key service_plan (did you mean SERVICE_PLAN?)`,
        `${file}: unknown key COLOUR_SCHEME`,
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("warns when limits are set above the plan's published numbers", () => {
    const c = parseConfig({ ...base, SERVICE_RATE_PER_MINUTE: '100', SERVICE_DAILY_CAP: 'unlimited' });
    const warnings = limitWarnings(c.service.plan, c.service.limits);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/^SERVICE_RATE_PER_MINUTE=100 is above the sales plan's published 60/);
    expect(warnings[1]).toMatch(/^SERVICE_DAILY_CAP=unlimited is above the sales plan's published 10000/);
    const within = parseConfig({ ...base, SERVICE_PLAN: 'team', SERVICE_RATE_PER_MINUTE: '120' });
    expect(limitWarnings(within.service.plan, within.service.limits)).toEqual([]);
    const enterprise = parseConfig({
      ...base,
      SERVICE_PLAN: 'enterprise',
      SERVICE_RATE_PER_MINUTE: '6000',
      SERVICE_BURST_PER_SECOND: '500',
    });
    expect(limitWarnings(enterprise.service.plan, enterprise.service.limits)).toEqual([]);
  });

  it('names HOST or PORT when the worker cannot listen', async () => {
    const holder = Fastify();
    await holder.listen({ host: '127.0.0.1', port: 0 });
    const taken = (holder.server.address() as AddressInfo).port;
    try {
      await expect(listenOrNameTheSetting(Fastify(), { host: '127.0.0.1', port: taken })).rejects.toThrow(
        new RegExp(`PORT: cannot listen on port ${taken} \\(already in use\\)`),
      );
      await expect(
        listenOrNameTheSetting(Fastify(), { host: 'no-such-host.invalid', port: 0 }),
      ).rejects.toThrow(/HOST: cannot listen on "no-such-host.invalid"/);
    } finally {
      await holder.close();
    }
  });
});
