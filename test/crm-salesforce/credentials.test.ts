import { afterEach, describe, expect, it } from 'vitest';
import { CrmAuthError } from '../../src/crm/errors.js';
import { createSalesforceAdapter } from '../../src/crm/salesforce/index.js';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { FakeClock } from '../../src/util/fakeClock.js';
import { adminPost, sandboxConfig } from './helpers.js';

describe('Salesforce adapter checkCredentials', () => {
  let sb: SalesforceSandbox | undefined;
  afterEach(async () => {
    await sb?.close();
    sb = undefined;
  });

  for (const mode of ['access_token', 'refresh_token'] as const) {
    it(`fails with CrmAuthError while the sandbox revokes access (${mode}), passes once restored`, async () => {
      const clock = new FakeClock();
      sb = await startSalesforceSandbox({ clock });
      const { clientId, clientSecret, refreshToken } = sb.oauth;
      const config = sandboxConfig(
        sb,
        mode === 'refresh_token' ? { clientId, clientSecret, refreshToken } : {},
      );
      const adapter = createSalesforceAdapter({ config, clock });
      await expect(adapter.checkCredentials()).resolves.toBeUndefined();
      await adminPost(sb, 'tokens/revoke');
      // Sessions end too, so working again needs a refresh (where the mode has one).
      if (mode === 'refresh_token') await adminPost(sb, 'expire-tokens');
      // Several refused probes in a row must not stop the session from refreshing later.
      for (let i = 0; i < 3; i++)
        await expect(adapter.checkCredentials()).rejects.toBeInstanceOf(CrmAuthError);
      await adminPost(sb, 'tokens/restore');
      await expect(adapter.checkCredentials()).resolves.toBeUndefined();
    });
  }
});
