import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import { analyzedCallOf, crmSync, hubspotEnv } from './helpers.js';

let svc: ServiceSandbox;
let hs: HubSpotSandbox;

beforeAll(async () => {
  [svc, hs] = await Promise.all([startServiceSandbox(), startHubSpotSandbox()]);
});
afterAll(() => Promise.all([svc.close(), hs.close()]));

describe('the crm-sync binary', () => {
  it('doctor: prints the checklist for the sandboxes, exits 0, and prints no secret', async () => {
    const { code, stdout, stderr } = await crmSync(['doctor'], hubspotEnv(svc, hs));
    // No database here, so the one note of src/cli/serviceFromConfig.ts, and nothing else.
    expect({ code, stderr: stderr.replace(/^npm warn .*\n/gm, '') }).toEqual({
      code: 0,
      stderr: expect.stringMatching(
        /^note: this command's Service requests are not counted in the workers' shared budget: [^\n]*\n$/,
      ) as string,
    });
    expect(stdout).toContain(`✔ Service API key: accepted by ${svc.url}`);
    expect(stdout).toContain('✔ HubSpot calls.crmsync_call_id: string/text, unique');
    expect(stdout).toMatch(/All 22 checks passed\.\n$/);
    for (const secret of [svc.apiKey, svc.webhookSecret, hs.accessToken])
      expect(stdout).not.toContain(secret);
    // Exactly one Service request: GET /v1/calls?limit=1.
    expect(svc.state.countersSnapshot().byEndpoint).toEqual({ 'GET /v1/calls': 1 });
  });

  it('mappings preview <callId>: prints the activity with the call scores, exits 0', async () => {
    const call = analyzedCallOf(svc, 'jane.doe@acme.example');
    const { code, stdout } = await crmSync(['mappings', 'preview', call.id], hubspotEnv(svc, hs));
    expect(code).toBe(0);
    const activity = stdout.split('== Activity written to hubspot')[1]?.split('== Follow-ups')[0] ?? '';
    for (const [name, score] of Object.entries(call.scoring)) {
      expect(activity).toContain(`"crmsync_score_${name}": ${score}`);
    }
  });
});
