/**
 * One driver per CRM sandbox for the adapter contract suite: start the sandbox, build the real
 * adapter on a fake clock, read back what was written, and make the CRM refuse for its rate limit
 * the way that CRM does. The suite itself (adapter.contract.test.ts) is CRM-neutral.
 */
import type { SalesforceConfig } from '../../src/crm/settings.js';
import { createHubSpotAdapter } from '../../src/crm/hubspot/index.js';
import { createSalesforceAdapter } from '../../src/crm/salesforce/index.js';
import type { CrmAdapter, CrmName } from '../../src/crm/types.js';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { FakeClock } from '../../src/util/fakeClock.js';
import { adminPost, adminRecords, sandboxConfig, testJwtKeys } from '../crm-salesforce/helpers.js';

export interface Written {
  /** The call or draft id the record is keyed on. */
  key: string;
  id: string;
}

export interface CrmDriver {
  readonly crm: CrmName;
  /** The time the adapter from `adapterOnFakeClock` sees. */
  readonly clock: FakeClock;
  /** One adapter per driver (one token: HubSpot limits searches per token), on the real clock. */
  adapter(): CrmAdapter;
  /** Another adapter on `clock`, for waits the test moves time through. */
  adapterOnFakeClock(): CrmAdapter;
  /** Activities the sandbox holds, keyed on the call id. */
  activities(): Promise<Written[]>;
  /** Follow-up drafts the sandbox holds, keyed on the draft id. */
  followups(): Promise<Written[]>;
  /** The next write is refused for the CRM's rate limit, as that CRM refuses it. */
  refuseNextWriteForRate(): Promise<void>;
  reset(): Promise<void>;
  close(): Promise<void>;
}

export async function hubSpotDriver(): Promise<CrmDriver> {
  const sb: HubSpotSandbox = await startHubSpotSandbox();
  const clock = new FakeClock(Date.now());
  const read = async (type: string, key: string) => {
    const res = await fetch(`${sb.url}/_admin/objects/${type}`);
    const body = (await res.json()) as { results: { id: string; properties: Record<string, string> }[] };
    return body.results.flatMap((r) => (r.properties[key] ? [{ key: r.properties[key], id: r.id }] : []));
  };
  // A 429 is handed to the caller (the worker's job waits it out) instead of slept on in-process.
  const make = (c?: FakeClock) =>
    createHubSpotAdapter({
      config: { baseUrl: sb.url, accessToken: sb.accessToken },
      ...(c ? { clock: c } : {}),
      retry: { maxWaitMs: 0 },
    });
  const shared = make();
  return {
    crm: 'hubspot',
    clock,
    adapter: () => shared,
    adapterOnFakeClock: () => make(clock),
    activities: () => read('calls', 'crmsync_call_id'),
    followups: () => read('notes', 'crmsync_followup_id'),
    // HubSpot: 429 with policyName TEN_SECONDLY_ROLLING (API usage guidelines, "Rate limits").
    refuseNextWriteForRate: async () =>
      sb.state.faults.add({
        status: 429,
        policyName: 'TEN_SECONDLY_ROLLING',
        count: 1,
        match: '/batch/upsert',
      }),
    reset: async () => sb.state.reset(),
    close: () => sb.close(),
  };
}

/** The Salesforce flows crm-sync supports for renewing sessions; the suite runs once per flow. */
export type SalesforceFlow = 'refresh_token' | 'jwt_bearer' | 'client_credentials';

/** Settings for `flow` alone: no access token, so the adapter's first request obtains one. */
function flowConfig(sb: SalesforceSandbox, flow: SalesforceFlow): SalesforceConfig {
  const { clientId, clientSecret, refreshToken, username, jwtPrivateKeyPem } = sb.oauth;
  const base = { loginUrl: sb.url, apiVersion: sandboxConfig(sb).apiVersion, clientId };
  switch (flow) {
    case 'refresh_token':
      return { ...base, clientSecret, refreshToken };
    case 'jwt_bearer':
      return { ...base, username, jwtPrivateKey: jwtPrivateKeyPem };
    case 'client_credentials':
      // The sandbox's URL stands for the org's My Domain.
      return { ...base, clientSecret };
  }
}

export async function salesforceDriver(flow: SalesforceFlow): Promise<CrmDriver> {
  const sb: SalesforceSandbox = await startSalesforceSandbox({ jwtKeys: testJwtKeys() });
  const clock = new FakeClock(Date.now());
  const read = async (type: string, key: string) =>
    (await adminRecords(sb, type)).flatMap((r) =>
      typeof r[key] === 'string' ? [{ key: r[key] as string, id: String(r.Id) }] : [],
    );
  const config = flowConfig(sb, flow);
  const shared = createSalesforceAdapter({ config });
  if (shared.authMode !== flow) throw new Error(`expected the ${flow} flow, got ${shared.authMode}`);
  return {
    crm: 'salesforce',
    clock,
    adapter: () => shared,
    adapterOnFakeClock: () => createSalesforceAdapter({ config, clock }),
    activities: () => read('Task', 'CrmSync_Call_Id__c'),
    followups: () => read('EmailMessage', 'CrmSync_Followup_Id__c'),
    // Salesforce: 403 REQUEST_LIMIT_EXCEEDED (REST API Developer Guide, "Status Codes and Error Responses").
    refuseNextWriteForRate: () => adminPost(sb, 'faults', { kind: 'request_limit', method: 'PATCH' }),
    reset: () => adminPost(sb, 'reset'),
    close: () => sb.close(),
  };
}
