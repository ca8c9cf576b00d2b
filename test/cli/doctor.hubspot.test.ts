import { credentialAdvice } from '../../src/crm/credentials.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runDoctor, runDoctorFromEnv } from '../../src/cli/commands/doctor.js';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import { captureIo, closedPort, configDirWith, configFrom, hubspotEnv, removeConfigDirs } from './helpers.js';

let svc: ServiceSandbox;
let hs: HubSpotSandbox;

beforeAll(async () => {
  svc = await startServiceSandbox({ seedCalls: 3 });
  hs = await startHubSpotSandbox({ withCustomProperties: false });
});
afterAll(async () => {
  await Promise.all([svc.close(), hs.close()]);
  removeConfigDirs();
});
afterEach(() => hs.state.reset({ withCustomProperties: false }));

/** The ✖ lines of a checklist. */
const failures = (text: string) => text.split('\n').filter((l) => l.startsWith('✖'));

describe('doctor with HubSpot', () => {
  it('reports the missing custom properties, --fix creates them, and the next run passes', async () => {
    const config = configFrom(hubspotEnv(svc, hs));
    const first = captureIo();
    expect(await runDoctor(config, first)).toBe(1);
    expect(first.text()).toContain('✔ Service API key: accepted by');
    expect(first.text()).toContain('✔ HubSpot credentials: HubSpot accepted the token');
    expect(failures(first.text())).toEqual(
      expect.arrayContaining([
        '✖ HubSpot calls.crmsync_call_id: missing',
        '✖ HubSpot calls.crmsync_score_overall: missing',
        '✖ HubSpot notes.crmsync_followup_id: missing',
        '✖ HubSpot deals.crmsync_last_call_date: missing',
        '✖ HubSpot deals.crmsync_average_score: missing',
      ]),
    );
    expect(first.text()).toContain('Run "crm-sync doctor --fix" to create the missing HubSpot properties.');
    expect(hs.state.store.properties.calls.has('crmsync_call_id')).toBe(false);

    const fixing = captureIo();
    expect(await runDoctor(config, fixing, { fix: true })).toBe(0);
    expect(fixing.text()).toContain('✔ HubSpot calls.crmsync_call_id: created');
    const created = hs.state.store.properties.calls.get('crmsync_call_id');
    expect(created).toMatchObject({ type: 'string', hasUniqueValue: true, groupName: 'crmsync' });
    expect(hs.state.store.properties.notes.get('crmsync_followup_id')).toMatchObject({
      hasUniqueValue: true,
    });
    // A note's call id is not unique: a call has several drafts.
    expect(hs.state.store.properties.notes.get('crmsync_call_id')).toMatchObject({
      hasUniqueValue: false,
    });
    expect(hs.state.store.properties.calls.get('crmsync_score_overall')).toMatchObject({ type: 'number' });
    // The follow-up generation stamp crm-sync sets before it asks (issue 22, defect 10).
    expect(fixing.text()).toContain('✔ HubSpot calls.crmsync_followups_generated_at: created');
    expect(hs.state.store.properties.calls.get('crmsync_followups_generated_at')).toMatchObject({
      type: 'datetime',
    });
    // The deal signals of the mapping's deal section, on the deal object, with their labels.
    expect(fixing.text()).toContain('✔ HubSpot deals.crmsync_last_call_score: created');
    expect(hs.state.store.properties.deals.get('crmsync_last_call_date')).toMatchObject({
      type: 'date',
      groupName: 'crmsync',
      label: 'CRM Sync last call date',
    });
    expect(hs.state.store.properties.deals.get('crmsync_average_score')).toMatchObject({ type: 'number' });
    expect(hs.state.store.properties.deals.get('crmsync_last_next_step')).toMatchObject({ type: 'string' });

    const again = captureIo();
    expect(await runDoctor(config, again)).toBe(0);
    expect(failures(again.text())).toEqual([]);
    expect(again.text()).toMatch(/All 22 checks passed\.$/);
    expect(again.text()).not.toContain('created');
  });

  it('names the scope the credential lacks and how to grant it', async () => {
    const config = configFrom(hubspotEnv(svc, hs));
    await runDoctor(config, captureIo(), { fix: true });
    hs.state.scopes = new Set([
      'crm.objects.contacts.read',
      'crm.objects.companies.read',
      'crm.objects.owners.read',
      'crm.schemas.contacts.read',
      'crm.schemas.deals.read',
    ]);
    try {
      const io = captureIo();
      expect(await runDoctor(config, io)).toBe(1);
      expect(failures(io.text())).toEqual([
        '✖ HubSpot scopes: lacks crm.objects.deals.read (to read deals records)',
      ]);
      expect(io.text()).toContain(
        'to fix: grant crm.objects.deals.read: Service Key: HubSpot Development > Keys > Service keys',
      );
    } finally {
      hs.state.scopes = undefined;
    }
  });

  it('says a wrong Service key is invalid, without printing it or any other secret', async () => {
    const key = 'sk-live-wrong-9f8e7d6c5b4a';
    const config = configFrom(hubspotEnv(svc, hs, { SERVICE_API_KEY: key }));
    const io = captureIo();
    expect(await runDoctor(config, io)).toBe(1);
    expect(failures(io.text())).toContain(
      `✖ Service API key: invalid key: the Service at ${svc.url} answered 401 Unauthorized`,
    );
    expect(io.text()).toContain('set SERVICE_API_KEY to a current key');
    for (const secret of [key, hs.accessToken, svc.webhookSecret]) expect(io.text()).not.toContain(secret);
    // The CRM is still checked, so one run shows everything to fix.
    expect(io.text()).toContain('✔ HubSpot credentials');
  });

  it('says an unreachable Service is unreachable', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const config = configFrom(hubspotEnv(svc, hs, { SERVICE_API_BASE_URL: url }));
    const io = captureIo();
    expect(await runDoctor(config, io, { json: true })).toBe(1);
    const report = JSON.parse(io.text()) as {
      ok: boolean;
      checks: Array<{ name: string; ok: boolean; detail: string }>;
    };
    expect(report.ok).toBe(false);
    expect(report.checks.find((c) => c.name === 'Service API key')).toEqual({
      name: 'Service API key',
      ok: false,
      detail: `unreachable: nothing answered at ${url} (ECONNREFUSED)`,
      fix: 'check SERVICE_API_BASE_URL and that the Service is reachable from here',
    });
  });

  it('fails the credentials check when HubSpot refuses the token', async () => {
    const token = 'pat-na1-revoked-0000';
    const config = configFrom(hubspotEnv(svc, hs, { HUBSPOT_ACCESS_TOKEN: token }));
    const io = captureIo();
    expect(await runDoctor(config, io)).toBe(1);
    expect(failures(io.text())).toEqual([expect.stringMatching(/^✖ HubSpot credentials: /)]);
    // The setting in use and how to renew it, not "check the HUBSPOT_* settings".
    expect(io.text()).toContain(`to fix: ${credentialAdvice(config).fix}`);
    expect(credentialAdvice(config).fix).toContain('HUBSPOT_ACCESS_TOKEN');
    expect(io.text()).not.toContain(token);
  });

  it('reports a broken mapping by line and still checks the Service and the credentials', async () => {
    const dir = configDirWith(
      'hubspot',
      'version: 1\ncrm: hubspot\ncontext: {}\nwriteback:\n  activity:\n    object: calls\n    fields: {}\n',
    );
    const config = configFrom(hubspotEnv(svc, hs, { CONFIG_DIR: dir }));
    const io = captureIo();
    expect(await runDoctor(config, io)).toBe(1);
    expect(io.text()).toMatch(/^✖ mapping: .*hubspot\.yaml:5:\d+: writeback\.activity/m);
    expect(io.text()).toContain('✔ Service API key');
    expect(io.text()).toContain('✔ HubSpot credentials');
    expect(io.text()).not.toContain('crmsync_call_id');
  });

  it('names missing settings, never their values', async () => {
    const io = captureIo();
    const env = { ...hubspotEnv(svc, hs), SERVICE_API_KEY: undefined, HUBSPOT_ACCESS_TOKEN: undefined };
    expect(await runDoctorFromEnv({ ...env, HUBSPOT_CLIENT_SECRET: 'cs-hidden-123' }, io)).toBe(1);
    expect(io.text()).toMatch(/^✖ configuration: SERVICE_API_KEY: required/);
    expect(io.text()).toContain('HUBSPOT_ACCESS_TOKEN: required when CRM=hubspot');
    expect(io.text()).not.toContain('cs-hidden-123');
  });
});
