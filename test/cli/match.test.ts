import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import { credentialAdvice } from '../../src/crm/credentials.js';
import { configFrom, crmSync, hubspotEnv, jwtKeys, salesforceEnv } from './helpers.js';

let svc: ServiceSandbox;
let hs: HubSpotSandbox;
let sf: SalesforceSandbox;

beforeAll(async () => {
  [svc, hs, sf] = await Promise.all([
    startServiceSandbox(),
    startHubSpotSandbox(),
    startSalesforceSandbox({ jwtKeys: jwtKeys() }),
  ]);
});
afterAll(() => Promise.all([svc.close(), hs.close(), sf.close()]));

describe('crm-sync match', () => {
  it('a rejected token: one plain sentence naming the setting and the fix, not the raw 401; exit 2', async () => {
    const token = 'pat-na1-revoked-0000';
    const env = hubspotEnv(svc, hs, { HUBSPOT_ACCESS_TOKEN: token });
    const { code, stdout, stderr } = await crmSync(['match', 'walt@wayne.example'], env);
    const advice = credentialAdvice(configFrom(env));
    expect(stderr.trim()).toBe(`The ${advice.credential} was rejected. To fix: ${advice.fix}.`);
    expect(stderr).toContain('HUBSPOT_ACCESS_TOKEN');
    expect(code).toBe(2);
    expect(stdout + stderr).not.toContain(token);
  });

  it('HubSpot: prints the decision with its reasons, and writes nothing', async () => {
    hs.state.requests.clear();
    const { code, stdout, stderr } = await crmSync(['match', 'walt@wayne.example'], hubspotEnv(svc, hs));
    expect({ code, stderr: stderr.replace(/^npm warn .*\n/gm, '') }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain('contact_email: contact found by email address');
    expect(stdout).toContain("contact_company: the contact's primary company");
    expect(stdout).toContain(
      'company_open_deal: the contact has no open deal (1 closed); 2 open deals of the company; chose Wayne - Renewal 2027: soonest close date 2026-12-01',
    );
    expect(stdout).toContain('- not Wayne - Batmobile');
    const writes = hs.state.requests.records.filter(
      (r) => r.method !== 'GET' && !/\/(search|batch\/read)$/.test(r.path),
    );
    expect(writes).toEqual([]);
    expect(stdout).not.toContain(hs.accessToken);
  });

  it('Salesforce: a contact without an account is matched to the account of its email domain', async () => {
    const { code, stdout } = await crmSync(['match', 'rita@rockets.example'], salesforceEnv(svc, sf));
    expect(code).toBe(0);
    expect(stdout).toContain(
      "email_domain: its website rockets.example matches the email's domain rockets.example",
    );
    expect(stdout).toContain('Rocket Labs - Launch');
  });

  it('--json gives the lookup with its decision; a free-mail address is explained', async () => {
    const { code, stdout } = await crmSync(['match', 'sam@gmail.com', '--json'], hubspotEnv(svc, hs));
    expect(code).toBe(0);
    const out = JSON.parse(stdout) as { matchedBy: string; decision: { company: { reason: string } } };
    expect(out.matchedBy).toBe('none');
    expect(out.decision.company.reason).toContain('gmail.com is a free-mail domain');
  });
});
