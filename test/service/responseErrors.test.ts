import { describe, expect, it } from 'vitest';
import { isDailyCap, nextUtcMidnight } from '../../src/service/contract.js';
import {
  ServiceBadRequestError,
  ServiceDailyCapError,
  ServiceForbiddenError,
  ServiceNotFoundError,
  ServiceNotReadyError,
  ServiceRateLimitedError,
  ServiceResponseError,
  ServiceTransientError,
  ServiceUnauthorizedError,
} from '../../src/service/errors.js';
import { errorFromResponse, type FailedResponse } from '../../src/service/responseErrors.js';

const NOW = Date.UTC(2026, 0, 1, 23, 59, 0); // one minute before UTC midnight
const KEY = 'sk_live_very_secret';

function answer(status: number, over: Partial<FailedResponse> = {}) {
  return errorFromResponse({
    method: 'GET',
    path: '/v1/calls/c1',
    status,
    headers: {},
    bodyText: '',
    onAnalysisPath: false,
    nowMs: NOW,
    secrets: [KEY],
    ...over,
  });
}
const body = (code: string, message = 'm') => JSON.stringify({ error: { code, message } });

describe('errorFromResponse', () => {
  it.each([
    [400, ServiceBadRequestError, 'SERVICE_BAD_REQUEST'],
    [422, ServiceBadRequestError, 'SERVICE_BAD_REQUEST'],
    [413, ServiceBadRequestError, 'SERVICE_BAD_REQUEST'],
    [401, ServiceUnauthorizedError, 'SERVICE_UNAUTHORIZED'],
    [403, ServiceForbiddenError, 'SERVICE_FORBIDDEN'],
    [404, ServiceNotFoundError, 'SERVICE_NOT_FOUND'],
    [409, ServiceNotReadyError, 'SERVICE_NOT_READY'],
    [408, ServiceTransientError, 'SERVICE_TRANSIENT'],
    [500, ServiceTransientError, 'SERVICE_TRANSIENT'],
    [503, ServiceTransientError, 'SERVICE_TRANSIENT'],
    [302, ServiceResponseError, 'SERVICE_BAD_RESPONSE'],
  ])('maps %i to its class', (status, cls, code) => {
    const err = answer(status);
    expect(err).toBeInstanceOf(cls);
    expect(err.code).toBe(code);
    expect(err.status).toBe(status);
    expect(err.message).toContain(`GET /v1/calls/c1 answered ${status}`);
  });

  it('does not depend on an error body, and uses it when it is there', () => {
    expect(answer(400, { bodyText: '<html>oops</html>' })).toBeInstanceOf(ServiceBadRequestError);
    expect(answer(400, { bodyText: '{"error":"flat"}' }).serviceCode).toBeUndefined();
    const err = answer(422, { bodyText: body('invalid_field', 'deals[0].amount must be a number') });
    expect(err.serviceCode).toBe('invalid_field');
    expect(err.message).toContain('deals[0].amount must be a number');
  });

  it('blanks out the API key if the server echoes it', () => {
    const err = answer(401, { bodyText: body(`bad_key_${KEY}`, `key ${KEY} is not valid`) });
    expect(err.message).not.toContain(KEY);
    expect(err.serviceCode).not.toContain(KEY);
    expect(err.message).toContain('[redacted]');
  });

  describe('on the analysis path', () => {
    it('409 means not ready', () => {
      expect(answer(409, { onAnalysisPath: true, bodyText: body('analysis_not_ready') })).toBeInstanceOf(
        ServiceNotReadyError,
      );
    });

    it('404 with a code saying so means not ready; a bare 404 stays not found (the client then asks)', () => {
      expect(answer(404, { onAnalysisPath: true, bodyText: body('analysis_not_ready') })).toBeInstanceOf(
        ServiceNotReadyError,
      );
      expect(answer(404, { onAnalysisPath: true, bodyText: body('processing') })).toBeInstanceOf(
        ServiceNotReadyError,
      );
      expect(answer(404, { onAnalysisPath: true })).toBeInstanceOf(ServiceNotFoundError);
      expect(answer(404, { onAnalysisPath: true, bodyText: body('call_not_found') })).toBeInstanceOf(
        ServiceNotFoundError,
      );
    });
  });

  describe('429', () => {
    it('is rate limited, with the Retry-After wait', () => {
      const err = answer(429, { headers: { 'retry-after': '2.5' } });
      expect(err).toBeInstanceOf(ServiceRateLimitedError);
      expect((err as ServiceRateLimitedError).retryAfterMs).toBe(2_500);
    });

    it('keeps a missing or garbage Retry-After as undefined', () => {
      expect((answer(429) as ServiceRateLimitedError).retryAfterMs).toBeUndefined();
      expect(
        (answer(429, { headers: { 'retry-after': 'soon' } }) as ServiceRateLimitedError).retryAfterMs,
      ).toBe(undefined);
    });

    it('is the daily cap when Retry-After reaches past the next UTC midnight', () => {
      const err = answer(429, { headers: { 'retry-after': '61' } });
      expect(err).toBeInstanceOf(ServiceDailyCapError);
      expect((err as ServiceDailyCapError).resetsAt).toBe(NOW + 61_000);
      expect(answer(429, { headers: { 'retry-after': '60' } })).toBeInstanceOf(ServiceRateLimitedError);
      expect(answer(429, { headers: { 'retry-after': 'Fri, 02 Jan 2026 00:00:01 GMT' } })).toBeInstanceOf(
        ServiceDailyCapError,
      );
    });

    it('is the daily cap when the error code contains "daily"; resets at midnight without Retry-After', () => {
      const err = answer(429, { bodyText: body('Daily_Limit_Exceeded') });
      expect(err).toBeInstanceOf(ServiceDailyCapError);
      expect((err as ServiceDailyCapError).resetsAt).toBe(Date.UTC(2026, 0, 2));
      expect(err.code).toBe('SERVICE_DAILY_CAP');
    });
  });
});

describe('daily cap arithmetic', () => {
  it('finds the next UTC midnight', () => {
    expect(nextUtcMidnight(Date.UTC(2026, 0, 31, 23, 0))).toBe(Date.UTC(2026, 1, 1));
    expect(nextUtcMidnight(Date.UTC(2026, 0, 1))).toBe(Date.UTC(2026, 0, 2));
  });

  it('is strictly past midnight', () => {
    const t = Date.UTC(2026, 0, 1, 12);
    expect(isDailyCap(undefined, 12 * 3600_000, t)).toBe(false);
    expect(isDailyCap(undefined, 12 * 3600_000 + 1, t)).toBe(true);
    expect(isDailyCap('rate_limited', undefined, t)).toBe(false);
  });
});
