import { describe, expect, it } from 'vitest';
import { formatCall } from '../../src/cli/statusFormat.js';
import { formatTable } from '../../src/util/table.js';
import type { MatchDecision } from '../../src/crm/types.js';

const decision: MatchDecision = {
  crm: 'hubspot',
  matchedBy: 'email',
  contact: {
    type: 'contact',
    id: '1012',
    label: 'Walt Grant',
    rule: 'contact_email',
    reason: 'contact found by email address',
    rejected: [],
  },
  company: {
    type: 'company',
    id: '1007',
    label: 'Wayne Enterprises',
    rule: 'contact_company',
    reason: "the contact's primary company",
    rejected: [],
  },
  deal: {
    type: 'deal',
    id: '1026',
    label: 'Wayne - Renewal 2027',
    rule: 'company_open_deal',
    reason:
      'the contact has no open deal (1 closed); 2 open deals of the company; chose Wayne - Renewal 2027: soonest close date 2026-12-01',
    rejected: [{ id: '1025', label: 'Wayne - Batmobile', reason: 'closed (closedwon)' }],
  },
};

describe('crm-sync status --call', () => {
  it('shows why the CRM records were chosen and the warnings, apart from the row', () => {
    const text = formatCall({
      status: {
        callId: 'call_1',
        state: 'written_back',
        matchDecision: decision,
        warnings: [
          'MAPPING_FIELD_SKIPPED: context.company.size: expected a number, got text of 5 character(s)',
        ],
      },
      history: [{ at: '2026-11-25T10:00:00.000Z', fromState: null, toState: 'discovered', detail: null }],
    });
    expect(text).toContain('Why these CRM records');
    expect(text).toContain('company_open_deal: the contact has no open deal (1 closed)');
    expect(text).toContain('- not Wayne - Batmobile [1025]: closed (closedwon)');
    expect(text).toContain('Warnings\n- MAPPING_FIELD_SKIPPED: context.company.size');
    expect(text).not.toContain('[object Object]');
  });

  it('says when a call has no recorded decision', () => {
    const text = formatCall({
      status: { callId: 'old', state: 'written_back', matchDecision: null, warnings: [] },
      history: [],
    });
    expect(text).toContain('Why these CRM records\n(not recorded)');
    expect(text).not.toContain('Warnings');
  });
});

describe('CLI tables at 100 columns (issue 23)', () => {
  const reason =
    'the Service API key was rejected (401): set SERVICE_API_KEY to a key of the Service workspace, then restart the worker; held calls run by themselves';

  it('left-aligns text, wraps a long reason in full instead of cutting the fix, and keeps lines within 100', () => {
    const text = formatTable(
      ['call', 'at', 'reason'],
      [
        ['call_1', '2026-11-28T10:00:00.000Z', reason],
        ['call_22', '2026-11-28T10:01:00.000Z', 'no contact'],
      ],
      { width: 100 },
    );
    const lines = text.split('\n');
    expect(lines.every((l) => l.length <= 100)).toBe(true);
    expect(lines[0]).toMatch(/^call {5}at {24}reason$/);
    expect(lines[2]).toMatch(/^call_1 {3}2026-11-28T10:00:00.000Z {2}the Service API key/);
    expect(lines[3]!.startsWith(' '.repeat(35))).toBe(true);
    const wrapped = lines.slice(2, -1).map((l) => l.trim().replace(/^call_1\s+\S+\s+/, ''));
    expect(wrapped.join(' ')).toBe(reason);
    expect(lines.at(-1)).toBe('call_22  2026-11-28T10:01:00.000Z  no contact');
  });

  it('shows a call history detail in full and no 130-character columns in status --call', () => {
    const detail = `context pushed; ${'x'.repeat(150)}`;
    const text = formatCall({
      status: { callId: 'call_1', state: 'failed', lastErrorMessage: reason },
      history: [{ at: '2026-11-28T10:00:00.000Z', fromState: null, toState: 'failed', detail }],
    });
    expect(text.split('\n').every((l) => l.length <= 100)).toBe(true);
    expect(text.replace(/\s+/g, '')).toContain(detail.replace(/\s+/g, ''));
    expect(text).toMatch(/^field +value$/m);
  });
});
