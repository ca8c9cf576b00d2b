/** Which failed follow-up requests may be sent again (src/pipelines/followups.ts). */
import { describe, expect, it } from 'vitest';
import { BudgetClosedError } from '../../src/budget/errors.js';
import { DailyCapReachedError } from '../../src/budget/types.js';
import { followupRequestNotMade } from '../../src/pipelines/followups.js';
import {
  ServiceBadRequestError,
  ServiceNotFoundError,
  ServiceRateLimitedError,
  ServiceResponseError,
  ServiceTransientError,
  ServiceUnauthorizedError,
} from '../../src/service/errors.js';

const ctx = { method: 'POST', path: '/v1/calls/c1/followups' };
const status = (code: number) => new ServiceTransientError('x', { ...ctx, status: code }, 'status');

describe('followupRequestNotMade', () => {
  it.each([
    ['a 429', new ServiceRateLimitedError('x', { ...ctx, status: 429 }, 1_000)],
    ['a 503', status(503)],
    ['a refused connection', new ServiceTransientError('x', ctx, 'refused')],
    ['a connection broken before sending', new ServiceTransientError('x', ctx, 'unsent')],
    ['a 400', new ServiceBadRequestError('x', { ...ctx, status: 400 })],
    ['a 404', new ServiceNotFoundError('x', { ...ctx, status: 404 })],
    ['the 401 stop (not sent)', new ServiceUnauthorizedError('x', ctx)],
    ["the budget's daily cap", new DailyCapReachedError(0)],
    ['a closed budget', new BudgetClosedError()],
    ["the budget ledger's database error", new Error("Can't reach database server")],
  ])('is true for %s: no drafts were made', (_name, error) => {
    expect(followupRequestNotMade(error)).toBe(true);
  });

  it.each([
    ['a 500', status(500)],
    ['a 502', status(502)],
    ['a timeout after sending', new ServiceTransientError('x', ctx, 'timeout')],
    ['a connection lost after sending', new ServiceTransientError('x', ctx, 'connection')],
    ['a 2xx whose body breaks the contract', new ServiceResponseError('x', { ...ctx, status: 201 }, 'data')],
  ])('is false for %s: the Service may have made drafts', (_name, error) => {
    expect(followupRequestNotMade(error)).toBe(false);
  });
});
