import { afterEach, describe, expect, it } from 'vitest';
import { createHubSpotAdapter } from '../../src/crm/hubspot/index.js';
import type { HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { counts, FIELDS, sandbox } from './helpers.js';

describe('HUBSPOT_API_VERSION selects the date-versioned paths', () => {
  let sb: HubSpotSandbox | undefined;
  afterEach(async () => {
    await sb?.close();
    sb = undefined;
  });

  for (const apiVersion of ['2026-03', '2026-09']) {
    it(`sends a lookup, a write-back, its links and the OAuth refresh on ${apiVersion} paths only`, async () => {
      sb = await sandbox();
      const { refs } = sb.state;
      const adapter = createHubSpotAdapter({
        config: { baseUrl: sb.url, apiVersion, ...sb.oauth },
        retry: { baseDelayMs: 5 },
      });
      const found = await adapter.lookup({ email: 'jane.doe@acme.example' }, FIELDS);
      expect(found.contact?.id).toBe(refs.contacts.jane);
      const [written] = await adapter.upsertActivities([
        {
          callId: 'call-v',
          properties: { hs_timestamp: '2026-01-15T10:00:00.000Z', hs_call_title: 'Versioned' },
          links: { contactId: refs.contacts.jane, dealId: refs.deals.acmeAddon },
        },
      ]);
      expect(written).toMatchObject({ ok: true, created: true });

      const paths = Object.keys(counts(sb)).map((k) => k.split(' ')[1]!);
      expect(paths).toContain('/oauth/2026-03/token');
      expect(paths).toContain(`/crm/objects/${apiVersion}/calls/batch/upsert`);
      expect(paths).toContain(`/crm/associations/${apiVersion}/calls/deals/batch/create`);
      const other = paths.filter((p) => p !== '/oauth/2026-03/token' && !p.includes(`/${apiVersion}`));
      expect(other).toEqual([]);
    });
  }
});
