/**
 * HubSpot OAuth through the shared refresh-token store: should HubSpot hand back a new refresh token
 * (the sandbox's rotateRefreshTokens; HubSpot documents keeping the same one), two replicas on one
 * database keep refreshing across several access-token expiries, each presenting the newest token.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.js';
import type { HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import type { Database } from '../../src/store/database.js';
import { refreshTokensFor } from '../../src/store/crmCredentialStore.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import {
  createMigratedDatabase,
  DATABASE_KINDS,
  openTestDatabase,
  type TestDatabase,
} from '../store/helpers.js';
import { adapterFor, counts, FIELDS, sandbox } from './helpers.js';

const TTL = 60_000;
const jane = { email: 'jane.doe@acme.example' };

let sb: HubSpotSandbox | undefined;
let target: TestDatabase | undefined;
const opened: Database[] = [];
afterEach(async () => {
  for (const db of opened.splice(0)) await db.close();
  await sb?.close();
  await target?.drop(false);
  sb = target = undefined;
});

describe.each(DATABASE_KINDS)('HubSpot OAuth refresh token rotation (%s)', { timeout: 60_000 }, (kind) => {
  it('two replicas on one database keep working across several access-token expiries', async () => {
    const clock = new FakeClock();
    sb = await sandbox({ clock, oauth: { accessTokenTtlMs: TTL } });
    sb.state.auth.rotateRefreshTokens = true;
    target = await createMigratedDatabase(kind);
    const config = parseConfig({
      CONFIG_DIR: '/nonexistent-crm-sync-config',
      CRM: 'hubspot',
      HUBSPOT_BASE_URL: sb.url,
      HUBSPOT_CLIENT_ID: sb.oauth.clientId,
      HUBSPOT_CLIENT_SECRET: sb.oauth.clientSecret,
      HUBSPOT_REFRESH_TOKEN: sb.oauth.refreshToken,
      CREDENTIALS_KEY: randomBytes(32).toString('hex'),
    });
    const dbA = await openTestDatabase(target);
    opened.push(dbA);
    const dbB = kind === 'postgres' ? await openTestDatabase(target) : dbA;
    if (dbB !== dbA) opened.push(dbB);
    const replica = (db: Database) =>
      adapterFor(sb!, { oauth: true, clock, refreshTokens: refreshTokensFor(config, db.prisma) });
    const [a, b] = [replica(dbA), replica(dbB)];
    for (let round = 0; round < 3; round++) {
      const [ra, rb] = await Promise.all([a.lookup(jane, FIELDS), b.lookup(jane, FIELDS)]);
      expect([ra.contact?.id, rb.contact?.id]).toEqual([expect.any(String), expect.any(String)]);
      await clock.advance(TTL + 1);
    }
    const tokenRequests = Object.entries(counts(sb))
      .filter(([path]) => path.includes('/oauth/'))
      .reduce((n, [, c]) => n + c, 0);
    expect(tokenRequests).toBe(2 * 3);
    const row = await dbA.prisma.crmCredential.findUnique({ where: { crm: 'hubspot' } });
    expect(row?.version).toBe(2 * 3);
    expect(row?.refreshToken).not.toContain('sandbox-refresh');
  });
});
