import { generateKeyPairSync } from 'node:crypto';
import { DEFAULT_API_VERSION } from '../../src/crm/salesforce/apiVersions.js';
import { afterEach, describe, expect, it } from 'vitest';
import { CrmAuthError } from '../../src/crm/errors.js';
import { createSalesforceAdapter } from '../../src/crm/salesforce/index.js';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { FakeClock } from '../../src/util/fakeClock.js';
import { FIELDS, QUERY, requestCounts, sandboxConfig, testJwtKeys } from './helpers.js';

const TOKEN = 'POST /services/oauth2/token';
const TTL = 60_000;

let sb: SalesforceSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

async function start(clock: FakeClock, tokenTtlMs = TTL): Promise<SalesforceSandbox> {
  sb = await startSalesforceSandbox({ clock, tokenTtlMs, jwtKeys: testJwtKeys() });
  return sb;
}

const bob = { email: 'bob.smith@acme.example' };

describe('Salesforce sessions', () => {
  it('refreshes an expired access token transparently with the refresh token and replays the call', async () => {
    const clock = new FakeClock();
    const s = await start(clock);
    const { clientId, clientSecret, refreshToken } = s.oauth;
    const adapter = createSalesforceAdapter({
      config: sandboxConfig(s, { clientId, clientSecret, refreshToken }),
      clock,
    });
    const before = await adapter.lookup(bob, FIELDS);
    await clock.advance(TTL + 1);
    const after = await adapter.lookup(bob, FIELDS);
    expect(after).toEqual(before);
    const counts = (await requestCounts(s)).counts;
    expect(counts[TOKEN]).toBe(1);
    expect(counts[`GET ${QUERY}`]).toBe(5); // 2 + (401, replay, deals)
  });

  it('refreshes once for several calls that all met the expired token', async () => {
    const clock = new FakeClock();
    const s = await start(clock);
    const { clientId, clientSecret, refreshToken } = s.oauth;
    const adapter = createSalesforceAdapter({
      config: sandboxConfig(s, { clientId, clientSecret, refreshToken }),
      clock,
    });
    await adapter.lookup(bob, FIELDS);
    await clock.advance(TTL + 1);
    const results = await Promise.all([1, 2, 3].map(() => adapter.lookup(bob, FIELDS)));
    expect(results.every((r) => r.contact?.properties.LastName === 'Smith')).toBe(true);
    expect((await requestCounts(s)).counts[TOKEN]).toBe(1);
  });

  it('starts from a refresh token alone (no access token, no instance URL)', async () => {
    const s = await start(new FakeClock());
    const { clientId, clientSecret, refreshToken } = s.oauth;
    const config = { loginUrl: s.url, apiVersion: DEFAULT_API_VERSION, clientId, clientSecret, refreshToken };
    const adapter = createSalesforceAdapter({ config });
    expect(adapter.authMode).toBe('refresh_token');
    expect((await adapter.lookup(bob, FIELDS)).matchedBy).toBe('email');
    const counts = (await requestCounts(s)).counts;
    expect(counts[TOKEN]).toBe(1);
    expect(counts[`GET ${QUERY}`]).toBe(2);
  });

  it('signs a JWT bearer assertion, and signs a new one when the session expires', async () => {
    const clock = new FakeClock();
    const s = await start(clock);
    const config = {
      loginUrl: s.url,
      apiVersion: DEFAULT_API_VERSION,
      clientId: s.oauth.clientId,
      username: s.oauth.username,
      // As an environment variable carries it: one line with literal \n.
      jwtPrivateKey: s.oauth.jwtPrivateKeyPem!.replace(/\n/g, '\\n'),
    };
    const adapter = createSalesforceAdapter({ config, clock });
    expect(adapter.authMode).toBe('jwt_bearer');
    const before = await adapter.lookup(bob, FIELDS);
    await clock.advance(TTL + 1);
    expect(await adapter.lookup(bob, FIELDS)).toEqual(before);
    expect((await requestCounts(s)).counts[TOKEN]).toBe(2);
  });

  it('fails with CrmAuthError when the JWT is signed by another key', async () => {
    const s = await start(new FakeClock());
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    });
    const config = {
      loginUrl: s.url,
      apiVersion: DEFAULT_API_VERSION,
      clientId: s.oauth.clientId,
      username: s.oauth.username,
      jwtPrivateKey: other.toString(),
    };
    const adapter = createSalesforceAdapter({ config });
    const err = await adapter.lookup(bob, FIELDS).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmAuthError);
    expect((err as Error).message).not.toContain('PRIVATE KEY');
    expect((await requestCounts(s)).counts[TOKEN]).toBe(1);
  });

  it('fails with CrmAuthError when an access token without refresh expires', async () => {
    const clock = new FakeClock();
    const s = await start(clock);
    const adapter = createSalesforceAdapter({ config: sandboxConfig(s), clock });
    await clock.advance(TTL + 1);
    const err = await adapter.lookup(bob, FIELDS).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmAuthError);
    expect((err as Error).message).not.toContain(s.accessToken);
  });

  it('fails with CrmAuthError when the refresh token is refused', async () => {
    const clock = new FakeClock();
    const s = await start(clock);
    const config = sandboxConfig(s, {
      clientId: s.oauth.clientId,
      clientSecret: 'wrong',
      refreshToken: s.oauth.refreshToken,
    });
    const adapter = createSalesforceAdapter({ config, clock });
    await clock.advance(TTL + 1);
    await expect(adapter.lookup(bob, FIELDS)).rejects.toBeInstanceOf(CrmAuthError);
  });

  it('gives up with CrmAuthError instead of looping when fresh sessions are refused too', async () => {
    const s = await start(new FakeClock(), 0); // every token is dead on arrival
    const { clientId, clientSecret, refreshToken } = s.oauth;
    const adapter = createSalesforceAdapter({
      config: sandboxConfig(s, { clientId, clientSecret, refreshToken }),
    });
    await expect(adapter.lookup(bob, FIELDS)).rejects.toBeInstanceOf(CrmAuthError);
    const counts = (await requestCounts(s)).counts;
    expect(counts[TOKEN]).toBe(2);
    expect(counts[`GET ${QUERY}`]).toBe(3);
  });

  it('client credentials: starts from client id and secret alone, and asks for a new token when it expires', async () => {
    const clock = new FakeClock();
    const s = await start(clock);
    const { clientId, clientSecret } = s.oauth;
    const adapter = createSalesforceAdapter({
      config: { loginUrl: s.url, apiVersion: DEFAULT_API_VERSION, clientId, clientSecret },
      clock,
    });
    expect(adapter.authMode).toBe('client_credentials');
    const before = await adapter.lookup(bob, FIELDS);
    expect(before.matchedBy).toBe('email');
    await clock.advance(TTL + 1);
    expect(await adapter.lookup(bob, FIELDS)).toEqual(before);
    const { counts, recent } = await requestCounts(s);
    // One token at start, one after the 401 of the expired one; no refresh token anywhere.
    expect(counts[TOKEN]).toBe(2);
    expect(recent.filter((r) => r.status === 401)).toHaveLength(1);
  });

  it('client credentials: CrmAuthError, without the secret, when the app has no Run As user', async () => {
    sb = await startSalesforceSandbox({ clientCredentials: false, jwtKeys: testJwtKeys() });
    const { clientId, clientSecret } = sb.oauth;
    const adapter = createSalesforceAdapter({
      config: { loginUrl: sb.url, apiVersion: DEFAULT_API_VERSION, clientId, clientSecret },
    });
    const err = await adapter.lookup(bob, FIELDS).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmAuthError);
    expect((err as Error).message).not.toContain(clientSecret);
  });
});
