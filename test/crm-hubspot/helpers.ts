import { createHubSpotAdapter, type HubSpotAdapterDeps } from '../../src/crm/hubspot/index.js';
import type { LookupFields } from '../../src/crm/types.js';
import {
  startHubSpotSandbox,
  type HubSpotSandbox,
  type HubSpotSandboxOptions,
} from '@crm-sync/sandboxes/hubspot';

export const FIELDS: LookupFields = {
  contact: ['email', 'firstname', 'lastname'],
  lead: [],
  company: ['name', 'domain'],
  deal: ['dealname', 'amount', 'closedate', 'dealstage'],
  owner: ['email', 'firstName', 'lastName'],
};

export async function sandbox(opts: HubSpotSandboxOptions = {}): Promise<HubSpotSandbox> {
  return startHubSpotSandbox(opts);
}

/** An adapter on the sandbox's private-app token (or OAuth when asked). */
export function adapterFor(
  sb: HubSpotSandbox,
  extra: Partial<HubSpotAdapterDeps> & { oauth?: boolean } = {},
) {
  const { oauth, ...rest } = extra;
  const config = oauth
    ? {
        baseUrl: sb.url,
        clientId: sb.oauth.clientId,
        clientSecret: sb.oauth.clientSecret,
        refreshToken: sb.oauth.refreshToken,
      }
    : { baseUrl: sb.url, accessToken: sb.accessToken };
  return createHubSpotAdapter({ config, retry: { baseDelayMs: 5 }, ...rest });
}

/** Requests the sandbox answered, by "METHOD /path". */
export function counts(sb: HubSpotSandbox): Record<string, number> {
  return sb.state.requests.byPath();
}

export function total(sb: HubSpotSandbox): number {
  return sb.state.requests.records.length;
}
