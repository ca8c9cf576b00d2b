import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { reportRequests } from '../support/hubspotRequests.globalSetup.js';

describe('HubSpot sandbox: numbered-version (legacy) paths', () => {
  const dirs: string[] = [];
  let sb: HubSpotSandbox | undefined;
  const tmp = () => {
    const d = mkdtempSync(path.join(tmpdir(), 'hs-legacy-'));
    dirs.push(d);
    return d;
  };
  afterEach(async () => {
    await sb?.close();
    sb = undefined;
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  const call = (method: string, p: string, body?: unknown, token = sb!.accessToken) =>
    fetch(`${sb!.url}${p}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const search = { filterGroups: [], properties: ['email'], limit: 1 };

  it('refuses them by default with 410, counts them as legacy, and the run report fails on them', async () => {
    const counts = tmp();
    sb = await startHubSpotSandbox({ countsDir: counts });
    const legacy = await call('POST', '/crm/v3/objects/contacts/search', search);
    expect(legacy.status).toBe(410);
    expect(((await legacy.json()) as { category: string }).category).toBe('LEGACY_API_PATH');
    expect((await call('GET', '/crm/v4/objects/contacts/1/associations/deals')).status).toBe(410);
    expect((await call('POST', '/crm/objects/2026-09/contacts/search', search)).status).toBe(200);
    expect((await call('POST', '/crm/objects/2025-09/contacts/search', search)).status).toBe(404);
    await sb.close();
    sb = undefined;

    const out = tmp();
    const printed: string[] = [];
    expect(() => reportRequests(counts, out, (t) => printed.push(t))).toThrow(/2 numbered-version/);
    const report = JSON.parse(readFileSync(path.join(out, 'hubspot-requests.json'), 'utf8'));
    expect(report).toMatchObject({
      legacy: 2,
      byPrefix: {
        '/crm/v3/objects': { kind: 'legacy', count: 1 },
        '/crm/v4/objects': { kind: 'legacy', count: 1 },
        '/crm/objects/2026-09': { kind: 'dated', count: 1 },
      },
    });
    expect(printed.join('\n')).toMatch(/\/crm\/v3\/objects\s+legacy\s+1/);
  });

  it('serves them as their dated routes only with legacyPaths, still counted, and not failing the run', async () => {
    const counts = tmp();
    sb = await startHubSpotSandbox({ countsDir: counts, legacyPaths: true });
    const found = await call('POST', '/crm/v3/objects/contacts/search', search);
    expect(found.status).toBe(200);
    expect(((await found.json()) as { total: number }).total).toBeGreaterThan(0);
    const form = new URLSearchParams({
      grant_type: 'refresh_token',
      client_id: sb.oauth.clientId,
      client_secret: sb.oauth.clientSecret,
      refresh_token: sb.oauth.refreshToken,
    });
    const token = await fetch(`${sb.url}/oauth/v1/token`, { method: 'POST', body: form });
    expect(token.status).toBe(200);
    expect(sb.state.prefixCounts.legacy).toBe(2);
    await sb.close();
    sb = undefined;
    const report = reportRequests(counts, tmp(), () => {});
    expect(report).toMatchObject({ legacy: 0, legacyExpected: 2 });
  });
});
