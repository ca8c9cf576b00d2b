import { afterEach, describe, expect, it } from 'vitest';
import type { FieldRequirement } from '../../src/crm/types.js';
import type { HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { adapterFor, sandbox } from './helpers.js';

const REQUIRED: FieldRequirement[] = [
  { object: 'calls', name: 'crmsync_call_id', type: 'string', unique: true, label: 'Service call id' },
  { object: 'calls', name: 'crmsync_score_overall', type: 'number' },
  { object: 'calls', name: 'crmsync_score_rapport', type: 'number' },
  { object: 'calls', name: 'crmsync_objections_detected', type: 'number' },
  { object: 'note', name: 'crmsync_followup_id', type: 'string', unique: true },
];

describe('HubSpot adapter verifySetup (doctor)', () => {
  let sb: HubSpotSandbox | undefined;
  afterEach(async () => {
    await sb?.close();
    sb = undefined;
  });

  it('passes when every property exists with a fitting type', async () => {
    sb = await sandbox();
    const report = await adapterFor(sb).verifySetup(REQUIRED);
    expect(report.ok).toBe(true);
    expect(report.checks.map((c) => c.name)).toEqual([
      'credentials',
      'scopes',
      'calls.crmsync_call_id',
      'calls.crmsync_score_overall',
      'calls.crmsync_score_rapport',
      'calls.crmsync_objections_detected',
      'notes.crmsync_followup_id',
    ]);
  });

  it('reports missing properties, creates them with fix, and then writes on the unique id', async () => {
    sb = await sandbox({ withCustomProperties: false });
    const adapter = adapterFor(sb);
    const before = await adapter.verifySetup(REQUIRED);
    expect(before.ok).toBe(false);
    const missing = before.checks.filter((c) => !c.ok);
    expect(missing).toHaveLength(5);
    expect(missing[0]).toMatchObject({ name: 'calls.crmsync_call_id', detail: 'missing' });
    expect(missing[0]?.fix).toContain('doctor --fix');
    expect(sb.state.store.properties.calls.has('crmsync_call_id')).toBe(false);

    const fixed = await adapter.verifySetup(REQUIRED, { fix: true });
    expect(fixed.ok).toBe(true);
    expect(fixed.checks.filter((c) => c.detail === 'created')).toHaveLength(5);
    const def = sb.state.store.properties.calls.get('crmsync_call_id');
    expect(def).toMatchObject({
      type: 'string',
      fieldType: 'text',
      hasUniqueValue: true,
      groupName: 'crmsync',
      label: 'Service call id',
    });
    expect(sb.state.store.properties.notes.get('crmsync_followup_id')?.hasUniqueValue).toBe(true);

    expect((await adapter.verifySetup(REQUIRED)).ok).toBe(true);
    const [r] = await adapter.upsertActivities([
      {
        callId: 'after-fix',
        properties: { hs_timestamp: '2026-01-15T10:00:00.000Z', crmsync_score_overall: 70 },
        links: {},
      },
    ]);
    expect(r).toMatchObject({ ok: true, created: true });
  });

  it('reports a property of the wrong type or without unique values, and does not change it', async () => {
    sb = await sandbox({ withCustomProperties: false });
    const calls = sb.state.store.properties.calls;
    const adapter = adapterFor(sb);
    await adapter.verifySetup(REQUIRED.slice(2, 3), { fix: true }); // crmsync_score_rapport as number
    const report = await adapter.verifySetup(
      [
        { object: 'calls', name: 'crmsync_score_rapport', type: 'string' },
        { object: 'calls', name: 'hs_call_title', type: 'string', unique: true },
      ],
      { fix: true },
    );
    expect(report.ok).toBe(false);
    expect(report.checks[2]).toMatchObject({ name: 'calls.crmsync_score_rapport', ok: false });
    expect(report.checks[2]?.detail).toContain('number');
    expect(report.checks[3]).toMatchObject({ name: 'calls.hs_call_title', ok: false });
    expect(calls.get('crmsync_score_rapport')?.type).toBe('number');
  });

  it('names every read scope the credential lacks (403 MISSING_SCOPES) and what needs it', async () => {
    const all = [
      'crm.objects.contacts.read',
      'crm.objects.companies.read',
      'crm.objects.deals.read',
      'crm.objects.owners.read',
      'crm.schemas.contacts.read',
      'crm.schemas.deals.read',
    ];
    sb = await sandbox({
      scopes: all.filter((s) => s !== 'crm.objects.deals.read' && s !== 'crm.objects.owners.read'),
    });
    const report = await adapterFor(sb).verifySetup(REQUIRED);
    expect(report.ok).toBe(false);
    const scopes = report.checks.find((c) => c.name === 'scopes');
    expect(scopes).toMatchObject({ ok: false });
    expect(scopes?.detail.split('\n')).toEqual([
      'lacks crm.objects.deals.read (to read deals records)',
      'lacks crm.objects.owners.read (to read owners)',
    ]);
    expect(scopes?.fix).toContain('grant crm.objects.deals.read, crm.objects.owners.read');
    expect(scopes?.fix).toContain('Development > Keys > Service keys');
    // Everything else still checked: the credentials pass, the properties pass.
    expect(report.checks.filter((c) => !c.ok).map((c) => c.name)).toEqual(['scopes']);

    await fetch(`${sb.url}/_admin/scopes`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ scopes: all.filter((s) => s !== 'crm.schemas.contacts.read') }),
    });
    const noSchemas = await adapterFor(sb).verifySetup(REQUIRED);
    expect(noSchemas.checks.find((c) => c.name === 'scopes')?.detail).toBe(
      'lacks crm.schemas.contacts.read (to read contacts properties, calls properties, notes properties)',
    );
    expect(noSchemas.checks.find((c) => c.name === 'calls properties')).toMatchObject({ ok: false });
    expect(noSchemas.checks[0]).toMatchObject({ name: 'credentials', ok: true });
  });

  it('fails the credentials check with a bad token', async () => {
    sb = await sandbox();
    const report = await adapterFor(sb, { config: { baseUrl: sb.url, accessToken: 'nope' } }).verifySetup(
      REQUIRED,
    );
    expect(report).toMatchObject({ ok: false, checks: [{ name: 'credentials', ok: false }] });
  });
});
