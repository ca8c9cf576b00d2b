import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMappings, requiredFields } from '../../src/mapping/index.js';
import type { HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { requiredScope } from '@crm-sync/sandboxes/hubspot/scopes';
import { adapterFor, FIELDS, sandbox } from './helpers.js';

const ROOT = path.join(import.meta.dirname, '..', '..');

/** The scopes of docs/install.md's HubSpot scope table (rows starting with a `crm.` scope). */
function documentedScopes(): string[] {
  const guide = readFileSync(path.join(ROOT, 'docs/install.md'), 'utf8');
  const rows = guide.split('\n').filter((l) => l.startsWith('| `crm.'));
  const cells = rows.map((r) => r.split('|')[1]!);
  return [...new Set(cells.flatMap((c) => [...c.matchAll(/`(crm\.[a-z.]+)`/g)].map((m) => m[1]!)))].sort();
}

describe('docs/install.md HubSpot scopes', () => {
  let sb: HubSpotSandbox | undefined;
  afterEach(async () => {
    await sb?.close();
    sb = undefined;
  });

  it('are exactly the scopes the requests of doctor --fix, a lookup, write-backs, deal signals and a rematch need', async () => {
    sb = await sandbox({ withCustomProperties: false });
    const { contacts, companies, deals } = sb.state.refs;
    const adapter = adapterFor(sb);
    const mapping = loadMappings(path.join(ROOT, 'config'), 'hubspot');
    expect((await adapter.verifySetup(requiredFields(mapping), { fix: true })).ok).toBe(true);
    await adapter.lookup({ email: 'jane.doe@acme.example' }, FIELDS);
    const links = { contactId: contacts.jane, companyId: companies.acme, dealId: deals.acmeAddon };
    const [call] = await adapter.upsertActivities([
      { callId: 'scoped-1', properties: { hs_timestamp: '2026-01-15T10:00:00.000Z' }, links },
    ]);
    expect(call).toMatchObject({ ok: true });
    const [note] = await adapter.upsertFollowups([
      {
        callId: 'scoped-1',
        draftId: 'd1',
        key: 'scoped-1:d1',
        kind: 'note',
        properties: { hs_note_body: 'Follow up', crmsync_followup_id: 'scoped-1:d1' },
        links,
      },
    ]);
    expect(note).toMatchObject({ ok: true });
    const [deal] = await adapter.updateDeals([
      { dealId: deals.acmeAddon!, properties: { crmsync_last_call_score: 80 } },
    ]);
    expect(deal).toMatchObject({ ok: true });
    await adapter.findWritten(['scoped-1']);
    const [moved] = await adapter.moveActivityLinks([
      {
        callId: 'scoped-1',
        activityId: (call as { id: string }).id,
        from: { dealId: deals.acmeAddon },
        to: { dealId: deals.acmeExpansion },
      },
    ]);
    expect(moved).toMatchObject({ ok: true });

    const needed = new Set<string>();
    for (const r of sb.state.requests.records) {
      const scope = requiredScope(r.method, r.path);
      if (scope) needed.add(scope);
    }
    expect(documentedScopes()).toEqual([...needed].sort());
  });
});
