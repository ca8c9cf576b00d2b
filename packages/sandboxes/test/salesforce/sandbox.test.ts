import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { signJwtAssertion } from '../../../../src/crm/salesforce/index.js';
import { startSalesforceSandbox, type SalesforceSandbox } from '../../src/salesforce/index.js';
import { FakeClock } from '../../../../src/util/fakeClock.js';
import { adminPost, testJwtKeys } from '../../../../test/crm-salesforce/helpers.js';

let sb: SalesforceSandbox;
const clock = new FakeClock(Date.UTC(2026, 0, 20, 12));
const API = '/services/data/v62.0';

beforeAll(async () => {
  sb = await startSalesforceSandbox({ clock, jwtKeys: testJwtKeys() });
});
afterAll(async () => {
  await sb.close();
});
beforeEach(async () => {
  await adminPost(sb, 'reset');
});

async function api(method: string, path: string, body?: unknown, token = sb.accessToken) {
  const res = await fetch(`${sb.url}${API}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

const soql = (q: string) => api('GET', `/query?q=${encodeURIComponent(q)}`);
const names = async (q: string) => {
  const res = await soql(q);
  expect(res.status).toBe(200);
  return (res.body.records as Record<string, unknown>[]).map((r) => Object.values(r)[1]);
};

describe('Salesforce sandbox: SOQL', () => {
  it('filters with AND/OR, parentheses, comparisons and IN, case-insensitively', async () => {
    expect(
      await names(
        "SELECT Name FROM Opportunity WHERE (StageName = 'closed won' OR StageName = 'Closed Lost') AND Amount > 25000 AND Amount < 250000 ORDER BY Name",
      ),
    ).toEqual(['Acme - Legacy', 'Acme - Platform']);
    expect(
      await names(
        "SELECT Email FROM Contact WHERE Email IN ('JANE.DOE@acme.example', 'dana@umbrella.example') ORDER BY Email DESC",
      ),
    ).toEqual(['jane.doe@acme.example', 'dana@umbrella.example']);
    expect(
      await names(
        "SELECT Name FROM Account WHERE NOT Name LIKE 'acme%' AND Website != null ORDER BY Name LIMIT 2 OFFSET 1",
      ),
    ).toEqual(['Initech', 'Rocket Labs']);
  });

  it('understands date literals, TODAY, and NULLS FIRST/LAST', async () => {
    expect(
      await names('SELECT Name FROM Opportunity WHERE CloseDate <= 2026-02-01 AND IsClosed = false'),
    ).toEqual(['Gmail Fans - Never']);
    // The sandbox clock reads 2026-01-20; "Acme - Platform" closes that day.
    expect(await names('SELECT Name FROM Opportunity WHERE CloseDate = TODAY')).toEqual(['Acme - Platform']);
    expect(await names('SELECT Name FROM Opportunity WHERE CloseDate = LAST_N_DAYS:5 ORDER BY Name')).toEqual(
      ['Acme - Platform'],
    );
    expect(await names('SELECT Name FROM Opportunity WHERE CloseDate = NEXT_N_DAYS:10')).toEqual([
      'Acme - Legacy',
    ]);
    expect((await names('SELECT Name FROM Account ORDER BY Website'))[0]).toBe('Hooli');
    expect((await names('SELECT Name FROM Account ORDER BY Website ASC NULLS LAST')).at(-1)).toBe('Hooli');
    // Nulls first under DESC too unless NULLS LAST is given (SOQL and SOSL Reference, ORDER BY).
    expect((await names('SELECT Name FROM Account ORDER BY Website DESC'))[0]).toBe('Hooli');
    expect((await names('SELECT Name FROM Account ORDER BY Website DESC NULLS FIRST'))[0]).toBe('Hooli');
    const desc = await names('SELECT Name FROM Account ORDER BY Website DESC NULLS LAST');
    expect(desc.at(-1)).toBe('Hooli');
    expect(desc.slice(0, -1)).toEqual(
      await names('SELECT Name FROM Account WHERE Website != null ORDER BY Website DESC'),
    );
    expect(await names("SELECT Name FROM Account WHERE Website != 'acme.example' ORDER BY Name")).toContain(
      'Hooli',
    );
  });

  it('treats \\_ in LIKE as a literal underscore and returns relationship fields nested', async () => {
    await adminPost(sb, 'records/Account', { Name: 'A_B' });
    await adminPost(sb, 'records/Account', { Name: 'AxB' });
    expect(await names("SELECT Name FROM Account WHERE Name LIKE 'A\\_B'")).toEqual(['A_B']);
    const res = await soql(
      "SELECT Name, Account.Name, Owner.Email FROM Contact WHERE Account.Name = 'Umbrella Inc'",
    );
    expect(res.body.records[0]).toMatchObject({
      Name: 'Dana Scully',
      Account: { attributes: { type: 'Account' }, Name: 'Umbrella Inc' },
      Owner: { Email: 'max.seller@crm-sync.sandbox' },
    });
  });

  it('answers malformed queries, unknown fields and unknown objects like Salesforce', async () => {
    expect((await soql('SELECT FROM Contact')).body[0].errorCode).toBe('MALFORMED_QUERY');
    expect((await soql('SELECT Shoe__c FROM Contact')).body[0]).toMatchObject({ errorCode: 'INVALID_FIELD' });
    expect((await soql('SELECT Id FROM Spaceship__c')).body[0].errorCode).toBe('INVALID_TYPE');
    expect((await soql("SELECT Id FROM Opportunity WHERE Amount = 'x'")).status).toBe(400);
  });

  it('pages with a relative nextRecordsUrl', async () => {
    sb.state.queryBatchSize = 4;
    const first = await soql('SELECT Name FROM Opportunity ORDER BY Name');
    expect(first.body).toMatchObject({ totalSize: 13, done: false });
    expect(first.body.nextRecordsUrl).toMatch(/^\/services\/data\/v62\.0\/query\/01g\w+-4$/);
    const second = await api('GET', first.body.nextRecordsUrl.slice(API.length));
    expect(second.body.records).toHaveLength(4);
    const third = await api('GET', second.body.nextRecordsUrl.slice(API.length));
    const fourth = await api('GET', third.body.nextRecordsUrl.slice(API.length));
    expect(fourth.body).toMatchObject({ done: true, records: [{ Name: 'Wayne - Renewal 2027' }] });
  });
});

describe('Salesforce sandbox: records', () => {
  it('creates, reads, updates and upserts by external id (201 created, 204 updated, 300 ambiguous)', async () => {
    const created = await api('POST', '/sobjects/Task', { Subject: 'Hello' });
    expect(created).toMatchObject({ status: 201, body: { success: true } });
    expect((await api('PATCH', `/sobjects/Task/${created.body.id}`, { Subject: 'Hi' })).status).toBe(204);
    expect((await api('GET', `/sobjects/Task/${created.body.id}?fields=Subject`)).body).toMatchObject({
      Subject: 'Hi',
    });
    const up = await api('PATCH', '/sobjects/Task/CrmSync_Call_Id__c/c-1', { Subject: 'Call' });
    expect(up).toMatchObject({ status: 201, body: { success: true, created: true } });
    expect((await api('PATCH', '/sobjects/Task/CrmSync_Call_Id__c/C-1', { Subject: 'Call 2' })).status).toBe(
      204,
    );
    await adminPost(sb, 'records/Task', { CrmSync_Call_Id__c: 'dup' });
    await adminPost(sb, 'records/Task', { CrmSync_Call_Id__c: 'dup' });
    const ambiguous = await api('PATCH', '/sobjects/Task/CrmSync_Call_Id__c/dup', { Subject: 'x' });
    expect(ambiguous.status).toBe(300);
    expect(ambiguous.body).toHaveLength(2);
  });

  it('checks collection upserts per record, all-or-none, duplicates and the 200-record cap', async () => {
    const rec = (id: string, extra: object = {}) => ({
      attributes: { type: 'Task' },
      CrmSync_Call_Id__c: id,
      ...extra,
    });
    const mixed = await api('PATCH', '/composite/sobjects/Task/CrmSync_Call_Id__c', {
      allOrNone: false,
      records: [rec('a'), rec('b', { Subject: 'x'.repeat(256) }), rec('c'), rec('c')],
    });
    expect(mixed.status).toBe(200);
    expect(mixed.body[0]).toMatchObject({ success: true, created: true });
    expect(mixed.body[1]).toMatchObject({
      success: false,
      errors: [{ statusCode: 'STRING_TOO_LONG', fields: ['Subject'] }],
    });
    expect(mixed.body[2].errors[0].statusCode).toBe('DUPLICATE_EXTERNAL_ID');
    const allOrNone = await api('PATCH', '/composite/sobjects/Task/CrmSync_Call_Id__c', {
      allOrNone: true,
      records: [rec('d'), rec('e', { CallType: 'Sideways' })],
    });
    expect(allOrNone.body[0].errors[0].statusCode).toBe('ALL_OR_NONE_OPERATION_ROLLED_BACK');
    expect(allOrNone.body[1].errors[0].statusCode).toBe('INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST');
    expect(sb.state.store.all('Task').map((t) => t.CrmSync_Call_Id__c)).toEqual(['a']);
    const tooMany = await api('PATCH', '/composite/sobjects/Task/CrmSync_Call_Id__c', {
      records: Array.from({ length: 201 }, (_, i) => rec(`r${i}`)),
    });
    expect(tooMany).toMatchObject({ status: 400, body: [{ errorCode: 'EXCEEDED_ID_LIMIT' }] });
  });

  it('refuses a create an admin rule or required field forbids, per record, until the rules are lifted', async () => {
    const rules = (method: string, body?: unknown) =>
      fetch(`${sb.url}/_admin/validation-rules`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? null : JSON.stringify(body),
      });
    expect(
      (await rules('POST', { object: 'Task', field: 'CallDisposition', message: 'Log the result' })).status,
    ).toBe(204);
    expect((await rules('POST', { object: 'Task', field: 'CallType', kind: 'required' })).status).toBe(204);
    const rec = (id: string, extra: object = {}) => ({
      attributes: { type: 'Task' },
      CrmSync_Call_Id__c: id,
      ...extra,
    });
    const res = await api('PATCH', '/composite/sobjects/Task/CrmSync_Call_Id__c', {
      allOrNone: false,
      records: [rec('r1'), rec('r2', { CallDisposition: 'Connected', CallType: 'Outbound' })],
    });
    expect(res.status).toBe(200);
    expect(res.body[0]).toMatchObject({
      success: false,
      errors: [
        {
          statusCode: 'FIELD_CUSTOM_VALIDATION_EXCEPTION',
          message: 'Log the result',
          fields: ['CallDisposition'],
        },
        { statusCode: 'REQUIRED_FIELD_MISSING', fields: ['CallType'] },
      ],
    });
    expect(res.body[1]).toMatchObject({ success: true, created: true });
    expect((await rules('DELETE')).status).toBe(204);
    const again = await api('PATCH', '/composite/sobjects/Task/CrmSync_Call_Id__c', {
      allOrNone: false,
      records: [rec('r1')],
    });
    expect(again.body[0]).toMatchObject({ success: true, created: true });
  });

  it('describes objects with lengths, external ids and create-only fields', async () => {
    const { body } = await api('GET', '/sobjects/Task/describe');
    const field = (n: string) => body.fields.find((f: { name: string }) => f.name === n);
    expect(field('Subject')).toMatchObject({ type: 'string', length: 255, updateable: true });
    expect(field('TaskSubtype')).toMatchObject({ createable: true, updateable: false });
    expect(field('CrmSync_Call_Id__c')).toMatchObject({
      externalId: true,
      unique: true,
      custom: true,
      length: 255,
    });
  });
});

describe('Salesforce sandbox: limits, faults, tokens', () => {
  it('sends Sforce-Limit-Info on each response and refuses past the limit', async () => {
    const first = await api('GET', '/limits');
    expect(first.headers.get('sforce-limit-info')).toBe('api-usage=1/15000');
    expect(first.body.DailyApiRequests).toEqual({ Max: 15000, Remaining: 14999 });
    sb.state.setApiUsage(15_000);
    const over = await api('GET', '/limits');
    expect(over).toMatchObject({ status: 403, body: [{ errorCode: 'REQUEST_LIMIT_EXCEEDED' }] });
    expect(over.headers.get('sforce-limit-info')).toBe('api-usage=15001/15000');
  });

  it('injects faults for the next matching requests only', async () => {
    await adminPost(sb, 'faults', { count: 2, status: 503, method: 'GET' });
    expect((await api('GET', '/limits')).status).toBe(503);
    expect((await api('POST', '/sobjects/Task', { Subject: 'x' })).status).toBe(201);
    expect((await api('GET', '/limits')).body[0].errorCode).toBe('SERVER_UNAVAILABLE');
    expect((await api('GET', '/limits')).status).toBe(200);
  });

  it('answers 401 INVALID_SESSION_ID for unknown and expired tokens', async () => {
    expect((await api('GET', '/limits', undefined, 'nope')).body).toEqual([
      { message: 'Session expired or invalid', errorCode: 'INVALID_SESSION_ID' },
    ]);
  });

  const token = async (form: Record<string, string>) => {
    const res = await fetch(`${sb.url}/services/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form),
    });
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  };

  it('grants a token for a refresh token, signed with the client secret', async () => {
    const { clientId, clientSecret, refreshToken } = sb.oauth;
    const res = await token({
      grant_type: 'refresh_token',
      client_id: clientId,
      client_secret: clientSecret,
      refresh_token: refreshToken,
    });
    expect(res.status).toBe(200);
    expect(res.body.instance_url).toBe(sb.url);
    expect(res.body.id).toMatch(new RegExp(`^${sb.url}/id/00D\\w{15}/005\\w{15}$`));
    const expected = createHmac('sha256', clientSecret)
      .update(res.body.id! + res.body.issued_at!)
      .digest('base64');
    expect(res.body.signature).toBe(expected);
    expect((await api('GET', '/limits', undefined, res.body.access_token)).status).toBe(200);
    const bad = await token({ grant_type: 'refresh_token', client_id: clientId, refresh_token: 'nope' });
    expect(bad).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('verifies JWT bearer assertions: signature, issuer, audience and expiry', async () => {
    const { clientId, username } = sb.oauth;
    const key = testJwtKeys().privateKeyPem;
    const claims = { clientId, username, audience: sb.url, nowMs: clock.now() };
    const grant = (assertion: string) =>
      token({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion });
    expect((await grant(signJwtAssertion(claims, key))).status).toBe(200);
    const good = signJwtAssertion(claims, key).split('.');
    const forged = Buffer.from(
      JSON.stringify({ iss: clientId, sub: 'olivia.owner@crm-sync.sandbox', aud: sb.url, exp: 9e9 }),
    );
    expect((await grant(`${good[0]}.${forged.toString('base64url')}.${good[2]}`)).body.error).toBe(
      'invalid_grant',
    );
    expect(
      (await grant(signJwtAssertion({ ...claims, audience: 'https://evil.example' }, key))).body
        .error_description,
    ).toBe('audience is invalid');
    expect((await grant(signJwtAssertion({ ...claims, clientId: 'other' }, key))).body.error).toBe(
      'invalid_client_id',
    );
    expect(
      (await grant(signJwtAssertion({ ...claims, nowMs: clock.now() - 600_000 }, key))).body
        .error_description,
    ).toBe('expired assertion');
    expect((await grant(signJwtAssertion({ ...claims, lifetimeS: 3600 }, key))).status).toBe(400);
  });
});

describe('Salesforce sandbox: API versions', () => {
  it("lists the versions it offers at /services/data without a session, 31.0 (Summer '14) to 68.0 (Winter '27)", async () => {
    const res = await fetch(`${sb.url}/services/data`);
    expect(res.status).toBe(200);
    const versions = (await res.json()) as { label: string; url: string; version: string }[];
    expect(versions).toHaveLength(38);
    expect(versions[0]).toEqual({ label: "Summer '14", url: '/services/data/v31.0', version: '31.0' });
    expect(versions.at(-1)).toEqual({ label: "Winter '27", url: '/services/data/v68.0', version: '68.0' });
    expect(versions.find((v) => v.version === '66.0')?.label).toBe("Spring '26");
  });

  it('answers a retired version 410 GONE and one it does not have yet 404, before looking at the session', async () => {
    const get = async (version: string) => {
      const res = await fetch(`${sb.url}/services/data/v${version}/limits`, {
        headers: { authorization: `Bearer ${sb.accessToken}` },
      });
      return { status: res.status, body: (await res.json()) as { errorCode: string }[] };
    };
    expect(await get('30.0')).toMatchObject({ status: 410, body: [{ errorCode: 'GONE' }] });
    expect(await get('69.0')).toMatchObject({ status: 404, body: [{ errorCode: 'NOT_FOUND' }] });
    expect((await get('31.0')).status).toBe(200);
    expect((await get('68.0')).status).toBe(200);
  });
});
