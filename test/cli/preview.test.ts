import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMappingsPreview } from '../../src/cli/commands/mappings.js';
import { openPreviewSource } from '../../src/cli/commands/mappingsPreview.js';
import type { CrmName } from '../../src/crm/types.js';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import { analyzedCallOf, CONFIG_DIR, hubspotEnv, jwtKeys, salesforceEnv, type Env } from './helpers.js';

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

/** `mappings preview` as the CLI wires it, with the settings from `env` instead of process.env. */
function preview(env: Env, crm: CrmName, callId: string) {
  return runMappingsPreview(
    { openPreviewSource: (options) => openPreviewSource(options, { env }) },
    { configDir: CONFIG_DIR, crm, callId },
  );
}

/** Only reads reached the Service: no context push, no follow-up generation. */
function expectServiceOnlyRead(callId: string) {
  const endpoints = Object.keys(svc.state.countersSnapshot().byEndpoint);
  expect(endpoints.filter((e) => !e.startsWith('GET '))).toEqual([]);
  expect(svc.state.contexts(callId)).toEqual([]);
}

describe('mappings preview on the real Service client and CRM adapters', () => {
  it('HubSpot: shows the matched contact, and the activity carries the call scores; writes nothing', async () => {
    const call = analyzedCallOf(svc, 'jane.doe@acme.example');
    const result = await preview(hubspotEnv(svc, hs), 'hubspot', call.id);
    expect(result).toMatchObject({ exitCode: 0, stream: 'out' });
    expect(result.output).toContain(`Preview of call ${call.id} with ${CONFIG_DIR}/mappings/hubspot.yaml`);
    expect(result.output).toMatch(/^Lookup: contact \d+, \d+ open deal\(s\), matched by email$/m);
    const activity =
      result.output.split('== Activity written to hubspot')[1]?.split('== Follow-ups')[0] ?? '';
    expect(activity).toContain(`"crmsync_score_overall": ${call.scoring.overall}`);
    expect(activity).toContain(`"crmsync_score_closing": ${call.scoring.closing}`);
    expect(activity).toContain(`"crmsync_call_id": "${call.id}"`);
    // The deal section, from this call alone: the last and average score are the call's.
    const deal = result.output.split('== Deal signals written to hubspot (this call alone)')[1] ?? '';
    expect(deal).toMatch(/"dealId": "\d+"/);
    expect(deal).toContain(`"crmsync_last_call_score": ${call.scoring.overall}`);
    expect(deal).toContain(`"crmsync_average_score": ${call.scoring.overall}`);

    // HubSpot saw reads only (GETs, searches, batch reads), never a write.
    const writes = hs.state.requests.records.filter(
      (r) => r.method !== 'GET' && !/\/(search|batch\/read)$/.test(r.path),
    );
    expect(hs.state.requests.records.length).toBeGreaterThan(0);
    expect(writes).toEqual([]);
    expectServiceOnlyRead(call.id);
  });

  it('Salesforce: a lead-only participant is matched by lead email, with the call scores', async () => {
    const call = analyzedCallOf(svc, 'lena.lead@globex.example');
    const result = await preview(salesforceEnv(svc, sf), 'salesforce', call.id);
    expect(result.exitCode).toBe(0);
    expect(result.output).toMatch(/^Lookup: lead \w+, 0 open deal\(s\), matched by lead_email$/m);
    expect(result.output).toContain(`"CrmSync_Score_Overall__c": ${call.scoring.overall}`);
    expect(result.output).toContain('Note: no open deal matched: no deal signals are written');
    expect(result.output).not.toContain('== Deal signals');
    expectServiceOnlyRead(call.id);
  });

  it('an unknown call fails with the Service error, and the key is not in it', async () => {
    const key = 'sk-preview-wrong-key-1234';
    await expect(preview(hubspotEnv(svc, hs), 'hubspot', 'call_does_not_exist')).rejects.toThrow(
      /answered 404.*unknown call/,
    );
    const refused = preview(hubspotEnv(svc, hs, { SERVICE_API_KEY: key }), 'hubspot', 'call_x');
    await expect(refused).rejects.toThrow(/401.*invalid or was rotated/);
    await expect(refused).rejects.not.toThrow(key);
  });
});
