import { createPublicKey, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  CrmAuthError,
  CrmDailyLimitError,
  CrmNotFoundError,
  CrmRateLimitedError,
  CrmRejectedError,
  CrmSetupError,
  CrmTransientError,
  CrmFieldMissingError,
  CrmValidationError,
} from '../../src/crm/errors.js';
import {
  API_RETIREMENTS,
  DEFAULT_API_VERSION,
  judgeApiVersion,
  retirementOf,
} from '../../src/crm/salesforce/apiVersions.js';
import { ApiBudget } from '../../src/crm/salesforce/budget.js';
import { fitToFields, toObjectInfo, truncateText } from '../../src/crm/salesforce/describe.js';
import { recordFailure, toCrmError } from '../../src/crm/salesforce/errors.js';
import { isFreeMailDomain } from '../../src/crm/salesforce/freemail.js';
import { signJwtAssertion } from '../../src/crm/salesforce/jwt.js';
import {
  emailDomain,
  selectList,
  soqlField,
  soqlLikeContains,
  soqlString,
} from '../../src/crm/salesforce/soql.js';
import { proxyResolver } from '../../src/crm/salesforce/transport.js';
import { websiteMatchesDomain } from '../../src/crm/match/decide.js';
import { parseSoql } from '@crm-sync/sandboxes/salesforce/soql';
import { FakeClock } from '../../src/util/fakeClock.js';
import { testJwtKeys } from './helpers.js';

describe('SOQL text', () => {
  it('quotes any string so that a SOQL parser reads back exactly that value', () => {
    const nasty = [
      "o'neil@acme.example",
      "x' OR Name != '",
      'back\\slash',
      'line\nbreak\ttab',
      '"double"',
      "\\'",
    ];
    for (const value of nasty) {
      const q = parseSoql(`SELECT Id FROM Contact WHERE Email = ${soqlString(value)}`, '2026-01-01');
      expect(q.where).toEqual({ kind: 'compare', field: 'Email', op: '=', value: { kind: 'string', value } });
    }
    expect(soqlString("a'b")).toBe("'a\\'b'");
  });

  it('escapes LIKE wildcards in the searched value', () => {
    expect(soqlLikeContains('a_b%c')).toBe("'%a\\_b\\%c%'");
    const q = parseSoql(
      `SELECT Id FROM Account WHERE Website LIKE ${soqlLikeContains("o'k_1")}`,
      '2026-01-01',
    );
    expect(q.where).toMatchObject({ kind: 'like', pattern: "%o'k\uE0011%" });
  });

  it('accepts field names and relationship paths only, each once', () => {
    expect(soqlField('Account.Owner.Name')).toBe('Account.Owner.Name');
    expect(() => soqlField('Name FROM User --')).toThrow();
    expect(() => soqlField('(SELECT Id FROM Tasks)')).toThrow();
    expect(selectList(['Id', 'Name', 'id', 'Email'])).toBe('Id, Name, Email');
  });

  it('matches email domains to websites by host, never the other way round', () => {
    expect(emailDomain('Bob.Smith@ACME.example')).toBe('acme.example');
    expect(emailDomain('no-at-sign')).toBeUndefined();
    expect(websiteMatchesDomain('initech.example', 'https://www.initech.example/about')).toBe(true);
    expect(websiteMatchesDomain('acme.example', 'shop.acme.example')).toBe(true);
    expect(websiteMatchesDomain('acme.example', 'notacme.example')).toBe(false);
    expect(websiteMatchesDomain('uk.acme.example', 'acme.example')).toBe(false);
    expect(isFreeMailDomain('GMail.com')).toBe(true);
    expect(isFreeMailDomain('acme.example')).toBe(false);
  });
});

describe('text fitting', () => {
  it('cuts to the limit with an ellipsis and never splits a surrogate pair', () => {
    expect(truncateText('abcdef', 4)).toBe('abc…');
    expect(truncateText('abc', 4)).toBe('abc');
    const cut = truncateText('ab👍👍', 4);
    expect(cut).toBe('ab…');
    expect(cut.length).toBeLessThanOrEqual(4);
  });

  it('fits only text fields it knows, leaving numbers and unknown fields alone', () => {
    const info = toObjectInfo({
      name: 'Task',
      fields: [
        { name: 'Subject', type: 'string', length: 5 },
        { name: 'Score__c', type: 'double', length: 0 },
      ],
    });
    const fitted = fitToFields(info, { subject: 'too long', Score__c: 12345678, Other__c: 'x'.repeat(10) });
    expect(fitted).toEqual({
      values: { subject: 'too …', Score__c: 12345678, Other__c: 'x'.repeat(10) },
      truncated: ['Subject'],
    });
  });
});

describe('error mapping', () => {
  const ctx = { dailyPauseMs: 900_000 };
  const sdk = (errorCode: string, message = 'm', data?: unknown) =>
    Object.assign(new Error(message), { errorCode, data });

  it('maps each Salesforce outcome to its CrmError class', () => {
    expect(toCrmError(sdk('INVALID_SESSION_ID'), ctx)).toBeInstanceOf(CrmAuthError);
    const daily = toCrmError(sdk('REQUEST_LIMIT_EXCEEDED', 'TotalRequests Limit exceeded.'), ctx);
    expect(daily).toBeInstanceOf(CrmDailyLimitError);
    expect((daily as CrmDailyLimitError).retryAfterMs).toBe(900_000);
    expect(
      toCrmError(sdk('REQUEST_LIMIT_EXCEEDED', 'ConcurrentPerOrgLongTxn Limit exceeded.'), ctx),
    ).toBeInstanceOf(CrmRateLimitedError);
    expect(toCrmError(sdk('SERVER_UNAVAILABLE'), ctx)).toBeInstanceOf(CrmTransientError);
    expect(toCrmError(sdk('ERROR_HTTP_502'), ctx)).toBeInstanceOf(CrmTransientError);
    expect(toCrmError(Object.assign(new Error('down'), { name: 'ERROR_HTTP_503' }), ctx)).toBeInstanceOf(
      CrmTransientError,
    );
    expect(
      toCrmError(Object.assign(new Error('connect'), { name: 'FetchError', code: 'ECONNREFUSED' }), ctx),
    ).toBeInstanceOf(CrmTransientError);
    expect(toCrmError(Object.assign(new Error('bad'), { name: 'invalid_grant' }), ctx)).toBeInstanceOf(
      CrmAuthError,
    );
    expect(toCrmError(sdk('NOT_FOUND'), ctx)).toBeInstanceOf(CrmNotFoundError);
    expect(toCrmError(sdk('INVALID_TYPE'), ctx)).toBeInstanceOf(CrmSetupError);
  });

  it('names the fields of a rejection', () => {
    const unknown = toCrmError(sdk('INVALID_FIELD', "No such column 'Foo__c' on sobject of type Task"), ctx);
    expect(unknown).toBeInstanceOf(CrmRejectedError);
    expect((unknown as CrmRejectedError).fields).toEqual(['Foo__c']);
    const long = toCrmError(
      sdk('STRING_TOO_LONG', 'too long', { errorCode: 'STRING_TOO_LONG', fields: ['Subject'] }),
      ctx,
    );
    expect((long as CrmRejectedError).fields).toEqual(['Subject']);
    const many = toCrmError(
      sdk('MULTIPLE_API_ERRORS', 'Multiple errors', [
        {
          errorCode: 'REQUIRED_FIELD_MISSING',
          message: 'Required fields are missing: [LastName]',
          fields: ['LastName'],
        },
        { errorCode: 'STRING_TOO_LONG', message: 'x' },
      ]),
      ctx,
    );
    // A field the org requires is for its admin to resolve (issue 21): never retried, the fix in words.
    expect(many).toBeInstanceOf(CrmValidationError);
    expect((many as CrmValidationError).property).toBe('LastName');
    expect(many.message).toContain('the org requires `LastName` on record: map it in config/mappings');
  });

  it('reads a validation rule and a missing column in collection results as what they are', () => {
    const rule = recordFailure(
      [{ statusCode: 'FIELD_CUSTOM_VALIDATION_EXCEPTION', message: 'Log the call result', fields: [] }],
      'call-1',
      'Task',
    );
    expect(rule).toBeInstanceOf(CrmValidationError);
    expect(rule).toMatchObject({ code: 'CRM_VALIDATION_REJECTED', object: 'Task', retryable: false });
    expect(rule.message).toMatch(
      /a rule of the org refused the Task: .*\(Salesforce: Log the call result\)$/,
    );
    const gone = toCrmError(
      sdk('INVALID_FIELD', "No such column 'CrmSync_Call_Id__c' on sobject of type EmailMessage"),
      ctx,
    );
    expect(gone).toBeInstanceOf(CrmFieldMissingError);
    expect(gone).toMatchObject({ fields: ['CrmSync_Call_Id__c'], object: 'EmailMessage' });
    const value = recordFailure([{ statusCode: 'STRING_TOO_LONG', message: 'x', fields: ['Subject'] }], 'k');
    expect(value).not.toBeInstanceOf(CrmFieldMissingError);
    expect(value).toBeInstanceOf(CrmRejectedError);
  });

  it('explains jsforce\u2019s generic refresh failure by the recorded cause, and passes bugs through', () => {
    const wrapped = new Error('Unable to refresh session due to: expired access/refresh token');
    expect(toCrmError(wrapped, ctx)).toBeInstanceOf(CrmAuthError);
    const cause = new CrmTransientError('token endpoint down', 'salesforce', 503);
    expect(toCrmError(wrapped, { ...ctx, refreshFailure: cause })).toBe(cause);
    const bug = new TypeError('x is undefined');
    expect(toCrmError(bug, ctx)).toBe(bug);
  });
});

describe('API budget', () => {
  it('holds requests at the reserve, for pauseMs, then lets one request read the new usage', async () => {
    const clock = new FakeClock();
    const budget = new ApiBudget(clock, { reserveFraction: 0.1, reserveMin: 5, pauseMs: 60_000 });
    const first = await budget.acquire();
    budget.onLimitInfo('api-usage=800/1000');
    budget.release(first);
    budget.release(await budget.acquire());
    const second = await budget.acquire();
    budget.onLimitInfo('api-usage=901/1000; api-bursts=3/750');
    budget.release(second);
    const err = await budget.acquire().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmDailyLimitError);
    expect((err as CrmDailyLimitError).retryAfterMs).toBe(60_000);
    expect(budget.usage()).toMatchObject({
      remaining: 99,
      limit: 1000,
      rateLimitedUntil: clock.now() + 60_000,
    });

    await clock.advance(60_000);
    // One request reads the new usage; another waits for its answer.
    const probe = await budget.acquire();
    let waited = false;
    const next = budget.acquire().then((slot) => ((waited = true), slot));
    await clock.advance(200);
    expect(waited).toBe(false);
    budget.onLimitInfo('api-usage=700/1000');
    budget.release(probe);
    await clock.advance(100);
    budget.release(await next);
    expect(waited).toBe(true);
  });
});

describe('transport and JWT', () => {
  it('uses the environment proxy except for loopback hosts, and an explicit setting over both', () => {
    const env = { https_proxy: 'http://proxy:3128' };
    expect(proxyResolver(undefined, env)('https://acme.my.salesforce.com/services')).toBe(
      'http://proxy:3128',
    );
    expect(proxyResolver(undefined, env)('http://127.0.0.1:4020/services')).toBeUndefined();
    expect(proxyResolver(undefined, env)('http://localhost:4020/services')).toBeUndefined();
    expect(proxyResolver(null, env)('https://acme.my.salesforce.com')).toBeUndefined();
    expect(proxyResolver('http://other:8080', {})('http://127.0.0.1')).toBe('http://other:8080');
  });

  it('signs an RS256 assertion with iss, sub, aud and a 3-minute exp', () => {
    const keys = testJwtKeys();
    const nowMs = Date.UTC(2026, 0, 1);
    const jwt = signJwtAssertion(
      { clientId: 'cid', username: 'u@x', audience: 'https://login.salesforce.com/', nowMs },
      keys.privateKeyPem,
    );
    const [h, p, s] = jwt.split('.') as [string, string, string];
    expect(JSON.parse(Buffer.from(h, 'base64url').toString())).toEqual({ alg: 'RS256', typ: 'JWT' });
    expect(JSON.parse(Buffer.from(p, 'base64url').toString())).toEqual({
      iss: 'cid',
      sub: 'u@x',
      aud: 'https://login.salesforce.com',
      exp: nowMs / 1000 + 180,
    });
    const key = createPublicKey(keys.publicKeyPem);
    expect(verify('sha256', Buffer.from(`${h}.${p}`), key, Buffer.from(s, 'base64url'))).toBe(true);
    expect(verify('sha256', Buffer.from(`${h}.${p}x`), key, Buffer.from(s, 'base64url'))).toBe(false);
  });
});

describe('Salesforce API version verdict', () => {
  const offered = Array.from({ length: 38 }, (_, i) => `${31 + i}.0`);
  const nov2026 = Date.UTC(2026, 10, 28);

  it('passes the default 68.0 on an org that offers it, with no warning', () => {
    expect(DEFAULT_API_VERSION).toBe('68.0');
    expect(judgeApiVersion('68.0', offered, nov2026)).toEqual({
      ok: true,
      warn: false,
      detail: '68.0 (the org offers 31.0 to 68.0)',
    });
  });

  it("fails a version the org does not offer, naming a retired one's release", () => {
    expect(judgeApiVersion('69.0', offered, nov2026)).toMatchObject({
      ok: false,
      fix: expect.stringContaining('68.0'),
    });
    expect(judgeApiVersion('30.0', offered, nov2026).detail).toContain("(retired in Summer '25)");
  });

  it('fails an offered version older than Collections upsert (46.0)', () => {
    expect(judgeApiVersion('45.0', offered, nov2026)).toMatchObject({ ok: false, warn: false });
  });

  it('warns from a year before a retirement, not earlier', () => {
    expect(retirementOf('40.0')?.release).toBe("Summer '28");
    expect(retirementOf('41.0')).toBeUndefined();
    // A table where 62.0 retires: the real one announces nothing at 46.0 or later yet.
    const table = [{ ...API_RETIREMENTS[1]!, from: 41, to: 62, retiredOn: '2028-06-01' }];
    const yearBefore = Date.parse('2027-06-01');
    expect(judgeApiVersion('62.0', offered, yearBefore - 86_400_000, table).warn).toBe(false);
    const verdict = judgeApiVersion('62.0', offered, yearBefore + 86_400_000, table);
    expect(verdict).toMatchObject({ ok: true, warn: true });
    expect(verdict.detail).toContain("retires 41.0-62.0 in Summer '28 (Salesforce Help 005321531");
  });
});
