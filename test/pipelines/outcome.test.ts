import { describe, expect, it } from 'vitest';
import { DailyCapReachedError } from '../../src/budget/types.js';
import {
  CrmAuthError,
  CrmRateLimitedError,
  CrmRejectedError,
  CrmTransientError,
} from '../../src/crm/errors.js';
import { MappingRequiredMissingError } from '../../src/mapping/errors.js';
import { outcomeOf } from '../../src/pipelines/outcome.js';
import {
  ServiceBadRequestError,
  ServiceDailyCapError,
  ServiceRateLimitedError,
  ServiceTransientError,
  ServiceUnauthorizedError,
} from '../../src/service/errors.js';

const ctx = { method: 'GET', path: '/v1/calls/x' };
const NOW = Date.UTC(2026, 10, 22, 12);

describe('outcomeOf', () => {
  it('retries transient trouble', () => {
    expect(outcomeOf(new ServiceTransientError('503', { ...ctx, status: 503 }, 'status'), NOW).kind).toBe(
      'retry',
    );
    expect(outcomeOf(new CrmTransientError('502', 'hubspot', 502), NOW).kind).toBe('retry');
    expect(outcomeOf(new Error('connection terminated'), NOW)).toMatchObject({
      kind: 'retry',
      code: 'INTERNAL',
    });
  });

  it('waits out rate limits and daily caps without counting a try', () => {
    expect(outcomeOf(new ServiceRateLimitedError('429', { ...ctx, status: 429 }, 3000), NOW)).toMatchObject({
      kind: 'wait',
      delayMs: 3000,
    });
    expect(outcomeOf(new CrmRateLimitedError('429', 'hubspot', 429, 10_000), NOW)).toMatchObject({
      kind: 'wait',
      delayMs: 10_000,
    });
    const reset = NOW + 3_600_000;
    expect(outcomeOf(new DailyCapReachedError(reset), NOW)).toMatchObject({
      kind: 'wait',
      delayMs: 3_600_000,
    });
    expect(outcomeOf(new ServiceDailyCapError('cap', { ...ctx, status: 429 }, reset), NOW).kind).toBe('wait');
  });

  it('fails at once on what a retry cannot fix', () => {
    expect(outcomeOf(new ServiceBadRequestError('bad', { ...ctx, status: 400 }), NOW).kind).toBe('fail');
    expect(outcomeOf(new CrmRejectedError('no such property', 'hubspot', 400, ['x']), NOW)).toMatchObject({
      kind: 'fail',
      code: 'CRM_REJECTED',
    });
    const missing = new MappingRequiredMissingError('call_1', ['hs_timestamp'], ['hubspot.yaml:3']);
    expect(outcomeOf(missing, NOW)).toMatchObject({ kind: 'fail', code: 'MAPPING_REQUIRED_MISSING' });
  });

  it('stops on credentials a person must fix', () => {
    expect(outcomeOf(new ServiceUnauthorizedError('401', { ...ctx, status: 401 }), NOW).kind).toBe('stop');
    expect(outcomeOf(new CrmAuthError('expired', 'salesforce', 401), NOW).kind).toBe('stop');
  });
});
