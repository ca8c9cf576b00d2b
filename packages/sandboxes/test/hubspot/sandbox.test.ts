import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startHubSpotSandbox, type HubSpotSandbox } from '../../src/hubspot/index.js';
import { FakeClock } from '../../../../src/util/fakeClock.js';

const MAIN = new URL('../../src/hubspot/main.ts', import.meta.url).href;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON read back from the wire, checked by the assertions
type Json = any;

describe('HubSpot sandbox over raw HTTP', () => {
  let sb: HubSpotSandbox;
  beforeAll(async () => {
    sb = await startHubSpotSandbox({
      limits: { perWindow: 1000, windowMs: 60_000, daily: 1000, searchesPerSecond: 1000 },
    });
  });
  afterAll(() => sb.close());
  beforeEach(() => sb.state.reset());

  const api = async (method: string, path: string, body?: unknown, token: string | null = sb.accessToken) => {
    const res = await fetch(`${sb.url}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return {
      status: res.status,
      headers: res.headers,
      body: text ? (JSON.parse(text) as Record<string, Json>) : {},
    };
  };
  const search = (type: string, filters: unknown[]) =>
    api('POST', `/crm/objects/2026-09/${type}/search`, {
      filterGroups: [{ filters }],
      properties: ['email'],
      limit: 10,
    });

  it('answers 401 with HubSpot error bodies for a missing, unknown or expired token', async () => {
    const missing = await api('GET', '/crm/owners/2026-09/70001', undefined, null);
    expect(missing.status).toBe(401);
    expect(missing.body).toMatchObject({ status: 'error', category: 'INVALID_AUTHENTICATION' });
    expect(missing.body.correlationId).toMatch(/^[0-9a-f-]{36}$/);
    const form = new URLSearchParams({
      grant_type: 'refresh_token',
      client_id: sb.oauth.clientId,
      client_secret: sb.oauth.clientSecret,
      refresh_token: sb.oauth.refreshToken,
    });
    const tokenRes = await fetch(`${sb.url}/oauth/2026-03/token`, { method: 'POST', body: form });
    const grant = (await tokenRes.json()) as { access_token: string; expires_in: number; token_type: string };
    expect(grant).toMatchObject({ token_type: 'bearer', expires_in: 1800 });
    const ok = await api('GET', '/crm/owners/2026-09/70001', undefined, grant.access_token);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-hubspot-ratelimit-daily')).toBeNull(); // OAuth apps: no daily limit headers
    sb.state.auth.expireAll();
    const expired = await api('GET', '/crm/owners/2026-09/70001', undefined, grant.access_token);
    expect(expired).toMatchObject({ status: 401, body: { category: 'EXPIRED_AUTHENTICATION' } });
    const bad = await fetch(`${sb.url}/oauth/2026-03/token`, {
      method: 'POST',
      body: new URLSearchParams({ ...Object.fromEntries(form), refresh_token: 'wrong' }),
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ status: 'BAD_REFRESH_TOKEN' });
  });

  it('searches like HubSpot: EQ ignores case, IN wants lower-case values, tokens and presence', async () => {
    const eq = await search('contacts', [
      { propertyName: 'email', operator: 'EQ', value: 'Bob.Smith@ACME.example' },
    ]);
    expect(eq.body.results.map((r: Json) => r.properties.email)).toEqual(['bob.smith@acme.example']);
    const inLower = await search('contacts', [
      { propertyName: 'email', operator: 'IN', values: ['bob.smith@acme.example'] },
    ]);
    expect(inLower.body.total).toBe(1);
    const inMixed = await search('contacts', [
      { propertyName: 'email', operator: 'IN', values: ['Bob.Smith@ACME.example'] },
    ]);
    expect(inMixed.body.total).toBe(0);
    const token = await search('contacts', [
      { propertyName: 'email', operator: 'CONTAINS_TOKEN', value: '*@acme.example' },
    ]);
    expect(token.body.total).toBe(2);
    const noDomain = await search('companies', [{ propertyName: 'domain', operator: 'NOT_HAS_PROPERTY' }]);
    expect(noDomain.body.total).toBe(1);
    const paged = await api('POST', '/crm/objects/2026-09/deals/search', {
      limit: 3,
      sorts: ['hs_object_id'],
    });
    expect(paged.body.results).toHaveLength(3);
    expect(paged.body.paging.next.after).toBe('3');
    expect(paged.headers.get('x-hubspot-ratelimit-remaining')).toBeNull(); // search: no rate-limit headers
    const tooBig = await api('POST', '/crm/objects/2026-09/deals/search', { limit: 201 });
    expect(tooBig).toMatchObject({ status: 400, body: { category: 'VALIDATION_ERROR' } });
  });

  it('rejects a duplicate value of a unique property with 409, and duplicate ids in one upsert with 400', async () => {
    const props = { hs_timestamp: '2026-01-01T00:00:00Z', crmsync_call_id: 'dup-1' };
    expect((await api('POST', '/crm/objects/2026-09/calls', { properties: props })).status).toBe(201);
    const again = await api('POST', '/crm/objects/2026-09/calls', { properties: props });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ status: 'error', category: 'CONFLICT' });
    expect(again.body.errors[0].context.propertyName).toEqual(['crmsync_call_id']);
    const input = { idProperty: 'crmsync_call_id', id: 'x', properties: {} };
    const dupes = await api('POST', '/crm/objects/2026-09/calls/batch/upsert', { inputs: [input, input] });
    expect(dupes.status).toBe(400);
    const notUnique = await api('POST', '/crm/objects/2026-09/calls/batch/upsert', {
      inputs: [{ idProperty: 'hs_call_title', id: 'x', properties: {} }],
    });
    expect(notUnique.status).toBe(400);
    const many = Array.from({ length: 101 }, (_, i) => ({ ...input, id: `m-${i}` }));
    expect((await api('POST', '/crm/objects/2026-09/calls/batch/upsert', { inputs: many })).status).toBe(400);
  });

  it('fails a whole batch write that names an unknown property with one 400, on upsert and update alike', async () => {
    const upsert = await api('POST', '/crm/objects/2026-09/calls/batch/upsert', {
      inputs: [{ idProperty: 'crmsync_call_id', id: 'u-1', properties: { no_such_property: '1' } }],
    });
    const dealId = Object.values(sb.state.refs.deals)[0];
    const update = await api('POST', '/crm/objects/2026-09/deals/batch/update', {
      inputs: [
        { id: dealId, properties: { no_such_property: '1' } },
        { id: '999999999', properties: {} },
      ],
    });
    for (const res of [upsert, update]) {
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ status: 'error', category: 'VALIDATION_ERROR' });
      expect(res.body.errors[0].code).toBe('PROPERTY_DOESNT_EXIST');
    }
  });

  it('creates associations: labelled PUT answers 201, default PUT 200, wrong type ids 400', async () => {
    const created = await api('POST', '/crm/objects/2026-09/notes', {
      properties: { hs_timestamp: '2026-01-01T00:00:00Z' },
    });
    const noteId = created.body.id as string;
    const { jane } = sb.state.refs.contacts;
    const put = await api('PUT', `/crm/objects/2026-09/notes/${noteId}/associations/contacts/${jane}`, [
      { associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 202 },
    ]);
    expect(put).toMatchObject({ status: 201, body: { fromObjectTypeId: '0-46', toObjectId: Number(jane) } });
    const dflt = await api(
      'PUT',
      `/crm/objects/2026-09/notes/${noteId}/associations/default/deals/${sb.state.refs.deals.acmeAddon}`,
    );
    expect(dflt.status).toBe(200);
    expect(dflt.body.results[0].associationSpec.associationTypeId).toBe(214);
    const wrong = await api('PUT', `/crm/objects/2026-09/notes/${noteId}/associations/contacts/${jane}`, [
      { associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 194 },
    ]);
    expect(wrong.status).toBe(400);
    const read = await api('GET', `/crm/objects/2026-09/contacts/${jane}/associations/notes`);
    expect(read.body.results).toEqual([
      {
        toObjectId: Number(noteId),
        associationTypes: [{ category: 'HUBSPOT_DEFINED', typeId: 201, label: null }],
      },
    ]);
  });

  it('batch archive removes every link between each pair, both ways, and answers 204 even for pairs not linked', async () => {
    const created = await api('POST', '/crm/objects/2026-09/notes', {
      properties: { hs_timestamp: '2026-01-01T00:00:00Z' },
    });
    const noteId = created.body.id as string;
    const { acmeAddon, acmeRenewal } = sb.state.refs.deals;
    for (const deal of [acmeAddon, acmeRenewal]) {
      await api('PUT', `/crm/objects/2026-09/notes/${noteId}/associations/deals/${deal}`, [
        { associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 214 },
      ]);
    }
    const archived = await api('POST', '/crm/associations/2026-09/notes/deals/batch/archive', {
      inputs: [{ from: { id: noteId }, to: [{ id: acmeAddon }, { id: '424242' }] }],
    });
    expect(archived).toMatchObject({ status: 204, body: {} });
    const left = await api('GET', `/crm/objects/2026-09/notes/${noteId}/associations/deals`);
    expect(left.body.results.map((r: Json) => String(r.toObjectId))).toEqual([acmeRenewal]);
    const inverse = await api('GET', `/crm/objects/2026-09/deals/${acmeAddon}/associations/notes`);
    expect(inverse.body.results).toEqual([]);
    const tooMany = await api('POST', '/crm/associations/2026-09/notes/deals/batch/archive', {
      inputs: Array.from({ length: 1001 }, () => ({ from: { id: noteId }, to: [] })),
    });
    expect(tooMany.status).toBe(400);
  });

  it('reads by a unique idProperty, with v3 associations', async () => {
    const r = await api(
      'GET',
      '/crm/objects/2026-09/contacts/JANE.DOE@acme.example?idProperty=email&properties=firstname&associations=companies',
    );
    expect(r.status).toBe(200);
    expect(r.body.properties.firstname).toBe('Jane');
    expect(r.body.associations.companies.results).toContainEqual({
      id: sb.state.refs.companies.acme,
      type: 'contact_to_company',
    });
    expect((await api('GET', '/crm/objects/2026-09/contacts/424242')).body.category).toBe('OBJECT_NOT_FOUND');
  });

  it('enforces the rolling window and the daily limit with HubSpot 429 bodies and headers', async () => {
    const small = await startHubSpotSandbox({ limits: { perWindow: 2, windowMs: 60_000, daily: 3 } });
    try {
      const get = () =>
        fetch(`${small.url}/crm/owners/2026-09/70001`, {
          headers: { authorization: `Bearer ${small.accessToken}` },
        });
      const first = await get();
      expect(first.headers.get('x-hubspot-ratelimit-max')).toBe('2');
      expect(first.headers.get('x-hubspot-ratelimit-remaining')).toBe('1');
      expect(first.headers.get('x-hubspot-ratelimit-daily-remaining')).toBe('2');
      await get();
      const limited = await get();
      expect(limited.status).toBe(429);
      expect(await limited.json()).toMatchObject({
        status: 'error',
        errorType: 'RATE_LIMIT',
        policyName: 'TEN_SECONDLY_ROLLING',
      });
      small.state.limits.reset();
      small.state.faults.add({ status: 429, policyName: 'DAILY' });
      expect(await (await get()).json()).toMatchObject({
        message: 'You have reached your daily limit.',
        policyName: 'DAILY',
      });
    } finally {
      await small.close();
    }
  });

  it('limits searches to 5 in any sliding second with the SECONDLY 429, apart from the other requests', async () => {
    const clock = new FakeClock();
    const small = await startHubSpotSandbox({ clock, limits: { perWindow: 100, windowMs: 10_000 } });
    try {
      const call = (method: string, path: string, body?: unknown) =>
        fetch(`${small.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${small.accessToken}`, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
      const searchBody = { filterGroups: [], properties: ['email'], limit: 1 };
      const searchContacts = () => call('POST', '/crm/objects/2026-09/contacts/search', searchBody);
      for (let i = 0; i < 5; i++) expect((await searchContacts()).status).toBe(200);
      await clock.advance(999);
      const limited = await call('POST', '/crm/objects/2026-09/deals/search', searchBody);
      expect(limited.status).toBe(429);
      expect(await limited.json()).toMatchObject({
        status: 'error',
        message: 'You have reached your secondly limit.',
        errorType: 'RATE_LIMIT',
        policyName: 'SECONDLY',
      });
      // Search answers carry no X-HubSpot-RateLimit-* headers, the 429 included.
      for (const h of ['max', 'remaining', 'interval-milliseconds', 'daily', 'daily-remaining'])
        expect(limited.headers.get(`x-hubspot-ratelimit-${h}`)).toBeNull();
      // Other requests are not held by the search limit, and searches do not use up their window.
      const owner = await call('GET', '/crm/owners/2026-09/70001');
      expect(owner.status).toBe(200);
      expect(owner.headers.get('x-hubspot-ratelimit-remaining')).toBe('99');
      await clock.advance(1);
      expect((await searchContacts()).status).toBe(200);
      expect(small.state.limits.rejected).toEqual({ SECONDLY: 1, TEN_SECONDLY_ROLLING: 0, DAILY: 0 });
    } finally {
      await small.close();
    }
  });

  it('has an admin API: faults, request counts, objects, reset without custom properties', async () => {
    const fault = await fetch(`${sb.url}/_admin/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 503, count: 1, match: '/owners/' }),
    });
    expect(fault.status).toBe(204);
    expect((await api('GET', `/crm/objects/2026-09/companies/${sb.state.refs.companies.acme}`)).status).toBe(
      200,
    );
    expect((await api('GET', '/crm/owners/2026-09/70001')).status).toBe(503);
    expect((await api('GET', '/crm/owners/2026-09/70001')).status).toBe(200);
    const log = (await (await fetch(`${sb.url}/_admin/requests`)).json()) as {
      total: number;
      byPath: Record<string, number>;
    };
    expect(log.total).toBe(3);
    expect(log.byPath['GET /crm/owners/2026-09/70001']).toBe(2);
    const contacts = (await (await fetch(`${sb.url}/_admin/objects/contacts`)).json()) as {
      results: unknown[];
    };
    expect(contacts.results).toHaveLength(6);
    await fetch(`${sb.url}/_admin/reset`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ withoutCustomProperties: true }),
    });
    expect((await api('GET', '/crm/properties/2026-09/calls/crmsync_call_id')).status).toBe(404);
    const dupe = await api('POST', '/crm/properties/2026-09/calls', {
      name: 'hs_call_title',
      label: 'x',
      type: 'string',
      fieldType: 'text',
      groupName: 'callinformation',
    });
    expect(dupe).toMatchObject({ status: 409, body: { category: 'OBJECT_ALREADY_EXISTS' } });
  });

  it('runs from the CLI entry: prints the listening line and stops on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `import(${JSON.stringify(MAIN)}).then((m) => m.runHubSpotSandbox({ port: '0' }))`,
      ],
      { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.setEncoding('utf8');
    const line = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: string) => {
        out += chunk;
        const m = /hubspot sandbox listening on (http:\/\/127\.0\.0\.1:\d+) \(token (\S+)\)/.exec(out);
        if (m) resolve(m[1] ?? '');
      });
      child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
    });
    const res = await fetch(`${line}/crm/owners/2026-09/70001`, {
      headers: { authorization: 'Bearer pat-na1-sandbox-token' },
    });
    expect(res.status).toBe(200);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });
});
