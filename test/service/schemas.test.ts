import { describe, expect, it } from 'vitest';
import {
  analysisSchema,
  callListSchema,
  callSchema,
  followupsResponseSchema,
  listCallsQuery,
  metricsSchema,
  transcriptSchema,
} from '../../src/service/contract.js';
import { ServiceResponseError } from '../../src/service/errors.js';
import { parseWebhookEvent, WebhookEventError } from '../../src/service/events.js';
import { formatIssuePath, parseJsonText, parseResponse } from '../../src/service/validate.js';

const ctx = { method: 'GET', path: '/v1/calls', status: 200 };
const call = (over: Record<string, unknown> = {}) => ({
  id: 'call_1',
  status: 'analyzed',
  created_at: '2026-01-01T10:00:00Z',
  ...over,
});

function failure(fn: () => unknown): ServiceResponseError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ServiceResponseError) return err;
    throw err;
  }
  throw new Error('expected a ServiceResponseError');
}

describe('call schema', () => {
  it('accepts the spec call object in full', () => {
    const full = call({
      duration_seconds: 1830,
      platform: 'zoom',
      participant: { name: 'Ada', email: 'ada@example.com', company: 'Acme' },
      scoring: { overall: 82, rapport: 90, discovery: 75, objection_handling: 70, closing: 88 },
      objections_detected: 3,
      objections_handled: 2,
      methodology: 'MEDDIC',
      links: { transcript: '/v1/calls/call_1/transcript', analysis: '/v1/calls/call_1/analysis' },
    });
    expect(parseResponse(callSchema, full, ctx)).toEqual(full);
  });

  it('keeps unknown fields and unknown status values', () => {
    const parsed = parseResponse(callSchema, call({ status: 'archived_v2', sentiment: { mood: 'ok' } }), ctx);
    expect(parsed.status).toBe('archived_v2');
    expect(parsed['sentiment']).toEqual({ mood: 'ok' });
  });

  it('treats null optional fields as absent (not scored yet)', () => {
    expect(parseResponse(callSchema, call({ scoring: null, participant: null }), ctx).scoring).toBeNull();
  });

  it.each(['id', 'status', 'created_at'])('names a missing required field: %s', (field) => {
    const body = call();
    delete (body as Record<string, unknown>)[field];
    const err = failure(() => parseResponse(callSchema, body, ctx));
    expect(err.field).toBe(field);
    expect(err.message).toContain(`${field} is missing`);
    expect(err.code).toBe('SERVICE_BAD_RESPONSE');
  });

  it('rejects an optional field of the wrong type, naming its path', () => {
    const err = failure(() => parseResponse(callSchema, call({ scoring: { overall: 'high' } }), ctx));
    expect(err.field).toBe('scoring.overall');
  });
});

describe('list page schema', () => {
  it('names the exact element that is broken', () => {
    const data = [call(), call({ id: 'b' }), call({ id: 'c' }), { status: 'x', created_at: 'y' }];
    const err = failure(() =>
      parseResponse(callListSchema, { data, next_cursor: 'n', has_more: false }, ctx),
    );
    expect(err.field).toBe('data[3].id');
    expect(err.message).toContain('data[3].id is missing');
  });

  it('accepts a null next_cursor and requires has_more', () => {
    expect(parseResponse(callListSchema, { data: [], next_cursor: null, has_more: false }, ctx).data).toEqual(
      [],
    );
    expect(failure(() => parseResponse(callListSchema, { data: [] }, ctx)).field).toBe('has_more');
  });

  it('does not echo values into the message (they may be personal data)', () => {
    const err = failure(() =>
      parseResponse(
        callListSchema,
        { data: [call({ participant: { email: 12345678 } })], has_more: false },
        ctx,
      ),
    );
    expect(err.field).toBe('data[0].participant.email');
    expect(err.message).not.toContain('12345678');
  });
});

describe('resource schemas', () => {
  it('transcript: call_id and segment text are required', () => {
    const ok = {
      call_id: 'c',
      language: 'en',
      segments: [{ speaker: 'rep', start_seconds: 0, end_seconds: 2, text: 'hi' }],
    };
    expect(parseResponse(transcriptSchema, ok, ctx)).toEqual(ok);
    const err = failure(() =>
      parseResponse(transcriptSchema, { call_id: 'c', segments: [{ speaker: 'rep' }] }, ctx),
    );
    expect(err.field).toBe('segments[0].text');
  });

  it('analysis: call_id required, the rest lenient but typed', () => {
    const ok = {
      call_id: 'c',
      summary: 's',
      scoring: { overall: 70 },
      objections: [{ type: 'price', text: 'too dear', handled: true, at_seconds: 12 }],
      next_steps: ['send deck'],
      methodology: 'SPIN',
    };
    expect(parseResponse(analysisSchema, ok, ctx)).toEqual(ok);
    expect(failure(() => parseResponse(analysisSchema, { summary: 's' }, ctx)).field).toBe('call_id');
    expect(
      failure(() => parseResponse(analysisSchema, { ...ok, objections: [{ handled: 'yes' }] }, ctx)).field,
    ).toBe('objections[0].handled');
  });

  it('follow-ups: each draft needs id, subject and body', () => {
    const draft = {
      id: 'f1',
      subject: 'Thanks',
      body: 'Hi',
      to: ['a@b.c'],
      created_at: '2026-01-01T00:00:00Z',
    };
    expect(parseResponse(followupsResponseSchema, { data: [draft] }, ctx).data).toEqual([draft]);
    const { subject: _s, ...noSubject } = draft;
    expect(
      failure(() => parseResponse(followupsResponseSchema, { data: [draft, noSubject] }, ctx)).field,
    ).toBe('data[1].subject');
  });

  it('metrics: any object, but not an array or a scalar', () => {
    expect(parseResponse(metricsSchema, { calls: 3, by_rep: [] }, ctx)).toEqual({ calls: 3, by_rep: [] });
    expect(failure(() => parseResponse(metricsSchema, [1, 2], ctx)).field).toBe('(body)');
    expect(failure(() => parseResponse(metricsSchema, 'x', ctx)).field).toBe('(body)');
  });

  it('a body that is not JSON is a bad response', () => {
    expect(failure(() => parseJsonText('<html>', ctx)).field).toBe('(body)');
  });

  it('formats paths the way an operator reads them', () => {
    expect(formatIssuePath(['data', 3, 'participant', 'email'])).toBe('data[3].participant.email');
    expect(formatIssuePath([0, 'a'])).toBe('[0].a');
    expect(formatIssuePath([])).toBe('(body)');
  });
});

describe('list query', () => {
  it('uses the contract names and clamps limit to 1..100', () => {
    const q = listCallsQuery({
      limit: 500,
      cursor: 'abc',
      createdAfter: 'A',
      createdBefore: 'B',
      status: 'analyzed',
    });
    expect(Object.fromEntries(q)).toEqual({
      limit: '100',
      cursor: 'abc',
      created_after: 'A',
      created_before: 'B',
      status: 'analyzed',
    });
    expect(listCallsQuery({ limit: 0, cursor: null }).toString()).toBe('limit=1');
  });
});

describe('parseWebhookEvent', () => {
  const event = {
    id: 'evt_1',
    type: 'analysis.ready',
    created_at: '2026-01-01T10:00:00Z',
    data: { call_id: 'call_1', call: call() },
    delivery: 3,
  };

  it('parses an event and keeps unknown fields', () => {
    const parsed = parseWebhookEvent(event);
    expect(parsed.data.call?.id).toBe('call_1');
    expect(parsed['delivery']).toBe(3);
  });

  it('keeps unknown event types, so a receiver can store and skip them', () => {
    expect(parseWebhookEvent({ ...event, type: 'call.archived' }).type).toBe('call.archived');
  });

  it('carries a follow-up draft', () => {
    const followup = { id: 'f1', subject: 's', body: 'b', to: [] };
    expect(
      parseWebhookEvent({ ...event, type: 'followup.generated', data: { call_id: 'c', followup } }).data
        .followup,
    ).toEqual(followup);
  });

  it.each([
    [{ ...event, id: undefined }, 'id'],
    [{ ...event, data: {} }, 'data.call_id'],
    [{ ...event, data: { call_id: 'c', call: { id: 'c', status: 's' } } }, 'data.call.created_at'],
    [{ ...event, data: undefined }, 'data'],
    ['not an object', '(body)'],
  ])('names the bad field (%#)', (body, field) => {
    try {
      parseWebhookEvent(body);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(WebhookEventError);
      expect((err as WebhookEventError).field).toBe(field);
      expect((err as Error).message).toContain(field);
    }
  });
});
