import { afterEach, describe, expect, it } from 'vitest';
import { CrmAuthError } from '../../src/crm/errors.js';
import type { HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { adapterFor, sandbox } from './helpers.js';

async function admin(sb: HubSpotSandbox, path: string): Promise<void> {
  const res = await fetch(`${sb.url}/_admin/${path}`, { method: 'POST' });
  if (!res.ok) throw new Error(`admin ${path}: ${res.status}`);
}

describe('HubSpot adapter checkCredentials', () => {
  let sb: HubSpotSandbox | undefined;
  afterEach(async () => {
    await sb?.close();
    sb = undefined;
  });

  for (const oauth of [false, true]) {
    it(`fails with CrmAuthError while the sandbox revokes the ${oauth ? 'OAuth app' : 'private-app token'}, passes once restored`, async () => {
      sb = await sandbox();
      const adapter = adapterFor(sb, { oauth });
      await expect(adapter.checkCredentials()).resolves.toBeUndefined();
      await admin(sb, 'tokens/revoke');
      const err = await adapter.checkCredentials().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CrmAuthError);
      expect((err as Error).message).not.toContain(sb.accessToken);
      await admin(sb, 'tokens/restore');
      await expect(adapter.checkCredentials()).resolves.toBeUndefined();
    });
  }
});
