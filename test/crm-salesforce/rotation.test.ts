/**
 * Salesforce refresh token rotation (issue 22, defect 9): with rotation on, every refresh retires
 * the presented token, so every process must present the newest one. `doctor`, then two replicas
 * (two adapters, each on its own connection to one database) and a CLI command, across several
 * access-token expiries on a fake clock, all keep working; the two replicas refreshing at the same
 * moment do not lose the newest token; the stored token is sealed and never logged.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/cli/commands/doctor.js';
import type { AppConfig } from '../../src/config/config.js';
import { createSalesforceAdapter, type SalesforceAdapter } from '../../src/crm/salesforce/index.js';
import { UNSHARED_ROTATION } from '../../src/crm/salesforce/session.js';
import { createLogger } from '../../src/log/logger.js';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import type { Database } from '../../src/store/database.js';
import { refreshTokensFor } from '../../src/store/crmCredentialStore.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { captureIo, configFrom, salesforceEnv } from '../cli/helpers.js';
import {
  createEmptyDatabase,
  createMigratedDatabase,
  DATABASE_KINDS,
  openTestDatabase,
  type TestDatabase,
} from '../store/helpers.js';
import { FIELDS, requestCounts, testJwtKeys } from './helpers.js';

const TTL = 60_000;
const TOKEN = 'POST /services/oauth2/token';
const bob = { email: 'bob.smith@acme.example' };
const KEY = randomBytes(32).toString('base64');

let svc: ServiceSandbox | undefined;
let sb: SalesforceSandbox | undefined;
let target: TestDatabase | undefined;
const opened: Database[] = [];
afterEach(async () => {
  for (const db of opened.splice(0)) await db.close();
  await Promise.all([svc?.close(), sb?.close()]);
  await target?.drop(false);
  svc = sb = target = undefined;
});

async function setup(clock: FakeClock, over: Record<string, string> = {}): Promise<AppConfig> {
  svc = await startServiceSandbox({ seedCalls: 1 });
  sb = await startSalesforceSandbox({
    clock,
    tokenTtlMs: TTL,
    rotateRefreshTokens: true,
    jwtKeys: testJwtKeys(),
  });
  const { clientId, clientSecret, refreshToken } = sb.oauth;
  return configFrom(
    salesforceEnv(svc, sb, {
      SALESFORCE_INSTANCE_URL: undefined,
      SALESFORCE_ACCESS_TOKEN: undefined,
      SALESFORCE_CLIENT_ID: clientId,
      SALESFORCE_CLIENT_SECRET: clientSecret,
      SALESFORCE_REFRESH_TOKEN: refreshToken,
      ...over,
    }),
  );
}

describe.each(DATABASE_KINDS)('Salesforce refresh token rotation (%s)', { timeout: 120_000 }, (kind) => {
  it('doctor, two replicas and a CLI command keep working across several access-token expiries', async () => {
    const clock = new FakeClock();
    target = await createMigratedDatabase(kind);
    const config = await setup(clock, {
      CREDENTIALS_KEY: KEY,
      ...(target.url ? { DATABASE_URL: target.url } : {}),
      DATA_DIR: target.dataDir,
    });
    const logLines: string[] = [];
    const logger = createLogger({ level: 'debug' }, { write: (l: string) => void logLines.push(l) });

    // doctor refreshes first: that retires the configured token.
    const first = captureIo();
    expect(await runDoctor(config, first, {}, { clock, logger })).toBe(0);
    expect(first.text()).toMatch(/^✔ Salesforce credentials: signed in/m);

    // Two replicas, each with its own connection(s) to the database (embedded: one process).
    const dbA = await openTestDatabase(target);
    opened.push(dbA);
    const dbB = kind === 'postgres' ? await openTestDatabase(target) : dbA;
    if (dbB !== dbA) opened.push(dbB);
    const replica = (db: Database): SalesforceAdapter =>
      createSalesforceAdapter({
        config: config.salesforce,
        clock,
        logger,
        refreshTokens: refreshTokensFor(config, db.prisma),
      });
    const [a, b] = [replica(dbA), replica(dbB)];
    for (let round = 0; round < 3; round++) {
      // Both sessions expired at once: both refresh at the same moment, one after the other.
      const [ra, rb] = await Promise.all([a.lookup(bob, FIELDS), b.lookup(bob, FIELDS)]);
      expect([ra.matchedBy, rb.matchedBy]).toEqual(['email', 'email']);
      await clock.advance(TTL + 1);
    }
    // doctor once, then a token per replica per round (the first round's sessions are new too).
    expect((await requestCounts(sb!)).counts[TOKEN]).toBe(1 + 2 * 3);

    // The stored token is sealed: neither the configured nor any issued token is readable in it.
    const row = await dbA.prisma.crmCredential.findUnique({ where: { crm: 'salesforce' } });
    expect(row?.version).toBe(1 + 2 * 3);
    expect(row?.refreshToken).toMatch(/^v1:/);
    expect(row?.refreshToken).not.toContain('5Aep');

    // A CLI command after the replicas rotated the token several times (embedded: they stop first,
    // since a running worker holds that database).
    if (kind === 'embedded') for (const db of opened.splice(0)) await db.close();
    const later = captureIo();
    expect(await runDoctor(config, later, {}, { clock, logger })).toBe(0);
    if (kind === 'postgres') expect((await b.lookup(bob, FIELDS)).matchedBy).toBe('email');

    // Secrets never logged: no refresh token (the sandbox's start with 5Aep), no key.
    const logs = logLines.join('');
    expect(logs).toContain('salesforce session refreshed');
    expect(logs).not.toContain('5Aep');
    expect(logs).not.toContain(KEY);
  });
});

describe('Salesforce refresh token rotation: the admin authorises again', () => {
  it('presents a newly configured token rather than the stored successor of the old one', async () => {
    const clock = new FakeClock();
    target = await createMigratedDatabase('embedded');
    const config = await setup(clock, { CREDENTIALS_KEY: KEY, DATA_DIR: target.dataDir });
    const db = await openTestDatabase(target);
    opened.push(db);
    const adapterFor = (c: AppConfig) =>
      createSalesforceAdapter({ config: c.salesforce, clock, refreshTokens: refreshTokensFor(c, db.prisma) });
    expect((await adapterFor(config).lookup(bob, FIELDS)).matchedBy).toBe('email');
    const stored = await db.prisma.crmCredential.findUnique({ where: { crm: 'salesforce' } });

    // The admin authorised again: a new configured token, while the stored successor is still valid.
    const fresh = sb!.state.issuer.issueRefreshToken(sb!.state.integrationUserId);
    const reauthorised = { ...config, salesforce: { ...config.salesforce, refreshToken: fresh } };
    expect((await adapterFor(reauthorised).lookup(bob, FIELDS)).matchedBy).toBe('email');
    const after = await db.prisma.crmCredential.findUnique({ where: { crm: 'salesforce' } });
    expect(after?.origin).not.toBe(stored?.origin);
    expect(after?.version).toBe((stored?.version ?? 0) + 1);
    // The newly configured token is the one presented: rotation retired it.
    const again = await fetch(`${sb!.url}/services/oauth2/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: fresh,
        client_id: sb!.oauth.clientId,
        client_secret: sb!.oauth.clientSecret,
      }),
    });
    expect(again.status).toBe(400);
  });
});

describe('Salesforce refresh token rotation on a database not migrated yet', () => {
  it('doctor migrates nothing and says to run crm-sync migrate, presenting no token', async () => {
    const clock = new FakeClock();
    target = await createEmptyDatabase(DATABASE_KINDS.at(-1)!);
    const config = await setup(clock, {
      CREDENTIALS_KEY: KEY,
      ...(target.url ? { DATABASE_URL: target.url } : {}),
      DATA_DIR: target.dataDir,
    });
    const io = captureIo();
    expect(await runDoctor(config, io, {}, { clock })).toBe(1);
    expect(io.text()).toContain('the database has no crm_credential table yet');
    expect(io.text()).toContain('crm-sync migrate');
    expect((await requestCounts(sb!)).counts[TOKEN] ?? 0).toBe(0);
  });
});

describe('Salesforce refresh token rotation without CREDENTIALS_KEY', () => {
  it('fails doctor with the fix, and keeps a process working while it logs the fix once', async () => {
    const clock = new FakeClock();
    const config = await setup(clock);
    const io = captureIo();
    expect(await runDoctor(config, io, {}, { clock })).toBe(1);
    expect(io.text()).toContain(
      '✖ Salesforce credentials: signed in, but: Salesforce rotated the refresh token',
    );
    expect(io.text()).toContain('Set CREDENTIALS_KEY');
    expect(io.text()).not.toContain('5Aep');

    // The admin authorised again (a new token); rotation stays on, CREDENTIALS_KEY still unset.
    const fresh = sb!.state.issuer.issueRefreshToken(sb!.state.integrationUserId);
    const logLines: string[] = [];
    const logger = createLogger({ level: 'info' }, { write: (l: string) => void logLines.push(l) });
    const adapter = createSalesforceAdapter({
      config: { ...config.salesforce, refreshToken: fresh },
      clock,
      logger,
    });
    for (let round = 0; round < 3; round++) {
      expect((await adapter.lookup(bob, FIELDS)).matchedBy).toBe('email');
      await clock.advance(TTL + 1);
    }
    expect(logLines.filter((l) => l.includes(UNSHARED_ROTATION))).toHaveLength(1);
    expect(logLines.join('')).not.toContain('5Aep');
  });
});
