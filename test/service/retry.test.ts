import { describe, expect, it } from 'vitest';
import { DailyCapReachedError } from '../../src/budget/types.js';
import {
  ServiceBadRequestError,
  ServiceDailyCapError,
  ServiceForbiddenError,
  ServiceNotFoundError,
  ServiceNotReadyError,
  ServiceRateLimitedError,
  ServiceResponseError,
  ServiceTransientError,
  serviceDidNotAct,
  ServiceUnauthorizedError,
  type TransientKind,
} from '../../src/service/errors.js';
import {
  decideRetry,
  MAX_IN_PROCESS_WAIT_MS,
  rateLimitWaitMs,
  transientBackoffMs,
} from '../../src/service/retry.js';

const ctx = { method: 'GET', path: '/v1/calls/c1' };
const transient = (kind: TransientKind = 'status') => new ServiceTransientError('boom', ctx, kind);
const status = (code: number) => new ServiceTransientError('boom', { ...ctx, status: code }, 'status');
const rateLimited = (ms?: number) => new ServiceRateLimitedError('slow down', { ...ctx, status: 429 }, ms);
const opts = (random = 0.5, maxAttempts = 5) => ({ maxAttempts, random: () => random });

describe('decideRetry', () => {
  it('retries a transient failure with a jittered wait between the 500 ms floor and the attempt cap', () => {
    expect(decideRetry(transient(), 1, opts(0))).toEqual({ retry: true, reason: 'transient', waitMs: 500 });
    expect(decideRetry(transient(), 1, opts(0.999999))).toEqual({
      retry: true,
      reason: 'transient',
      waitMs: 999,
    });
    expect(decideRetry(transient('timeout'), 2, opts(0.5)).waitMs).toBe(1_250);
    expect(decideRetry(transient('connection'), 3, opts(0.5)).waitMs).toBe(2_250);
    expect(decideRetry(transient('refused'), 4, opts(1 - 1e-9)).waitMs).toBe(7_999);
  });

  it('caps the transient backoff at 30 s', () => {
    expect(transientBackoffMs(6, () => 0.999999)).toBeLessThanOrEqual(30_000);
    expect(transientBackoffMs(6, () => 0.999999)).toBeGreaterThan(29_000);
    expect(transientBackoffMs(40, () => 0.999999)).toBeLessThanOrEqual(30_000);
    expect(transientBackoffMs(40, () => 0)).toBe(500);
  });

  it('keeps the wait inside the bounds even when random misbehaves', () => {
    expect(transientBackoffMs(1, () => -3)).toBe(500);
    expect(transientBackoffMs(1, () => 7)).toBe(1_000);
  });

  it('waits for Retry-After on a 429, without jitter', () => {
    expect(decideRetry(rateLimited(12_000), 1, opts(0.9))).toEqual({
      retry: true,
      reason: 'rate_limited',
      waitMs: 12_000,
    });
    expect(decideRetry(rateLimited(0), 2, opts())).toEqual({
      retry: true,
      reason: 'rate_limited',
      waitMs: 0,
    });
  });

  it('backs off exponentially from 1 s on a 429 without Retry-After, at most 60 s', () => {
    expect(decideRetry(rateLimited(), 1, opts()).waitMs).toBe(1_000);
    expect(decideRetry(rateLimited(), 2, opts()).waitMs).toBe(2_000);
    expect(decideRetry(rateLimited(), 4, opts()).waitMs).toBe(8_000);
    expect(rateLimitWaitMs(rateLimited(), 20)).toBe(60_000);
  });

  it('hands a 429 back to the caller when Retry-After is longer than it waits in process', () => {
    expect(decideRetry(rateLimited(MAX_IN_PROCESS_WAIT_MS + 1), 1, opts())).toEqual({
      retry: false,
      reason: 'wait_too_long',
      waitMs: 0,
    });
  });

  it('stops when the attempts are used up', () => {
    expect(decideRetry(transient(), 5, opts(0.5, 5))).toEqual({
      retry: false,
      reason: 'attempts_exhausted',
      waitMs: 0,
    });
    expect(decideRetry(rateLimited(1_000), 3, opts(0.5, 3)).retry).toBe(false);
    expect(decideRetry(transient(), 4, opts(0.5, 5)).retry).toBe(true);
    expect(decideRetry(transient(), 1, opts(0.5, 1)).retry).toBe(false);
  });

  it.each([
    ['400/422', new ServiceBadRequestError('bad', { ...ctx, status: 400 })],
    ['401', new ServiceUnauthorizedError('key', { ...ctx, status: 401 })],
    ['403', new ServiceForbiddenError('scope', { ...ctx, status: 403 })],
    ['404', new ServiceNotFoundError('gone', { ...ctx, status: 404 })],
    ['not ready', new ServiceNotReadyError('later', { ...ctx, status: 409 })],
    ['daily cap', new ServiceDailyCapError('cap', { ...ctx, status: 429 }, Date.now() + 1000)],
    ['bad response', new ServiceResponseError('shape', { ...ctx, status: 200 }, 'data[0].id')],
    ['budget refusal', new DailyCapReachedError(Date.now())],
    ['abort', new DOMException('aborted', 'AbortError')],
    ['a bug', new TypeError('x is undefined')],
    ['a string', 'oops'],
  ])('never retries %s', (_name, error) => {
    expect(decideRetry(error, 1, opts())).toEqual({ retry: false, reason: 'not_retryable', waitMs: 0 });
  });

  describe('for a request that must not run twice', () => {
    const once = { ...opts(0), idempotent: false };

    it('retries a 429, a 503 and a connection refused or broken before sending: the Service did nothing', () => {
      expect(decideRetry(rateLimited(2_000), 1, once)).toEqual({
        retry: true,
        reason: 'rate_limited',
        waitMs: 2_000,
      });
      for (const error of [transient('refused'), transient('unsent'), status(503)]) {
        expect(decideRetry(error, 1, once)).toEqual({ retry: true, reason: 'transient', waitMs: 500 });
      }
    });

    it.each([
      ['a timeout', transient('timeout')],
      ['a connection lost after sending', transient('connection')],
      ['a 500', status(500)],
      ['a 502', status(502)],
      ['a 504', status(504)],
    ])('does not retry %s: the Service may have acted', (_name, error) => {
      expect(decideRetry(error, 1, once)).toEqual({
        retry: false,
        reason: 'not_idempotent',
        waitMs: 0,
      });
    });
  });
});

describe('serviceDidNotAct', () => {
  it.each([
    ['a 429', rateLimited(1_000)],
    ['a spent daily cap', new ServiceDailyCapError('cap', { ...ctx, status: 429 }, 0)],
    ['a 503', status(503)],
    ['a refused connection', transient('refused')],
    ['a connection broken before the request was written', transient('unsent')],
  ])('is true for %s', (_name, error) => {
    expect(serviceDidNotAct(error)).toBe(true);
  });

  it.each([
    ['a timeout after sending', transient('timeout')],
    ['a connection lost after sending', transient('connection')],
    ['a 500', status(500)],
    ['a 504', status(504)],
    ['a bad response', new ServiceResponseError('bad', ctx, 'data')],
    ['an abort', new DOMException('aborted', 'AbortError')],
    ['a non-Service error', new Error('x')],
  ])('is false for %s: the Service may have acted, or it is not a Service answer', (_name, error) => {
    expect(serviceDidNotAct(error)).toBe(false);
  });
});
