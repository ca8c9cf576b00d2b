import { describe, expect, it } from 'vitest';
import { formatCall } from '../../src/cli/statusFormat.js';
import type { MatchDecision } from '../../src/crm/match/types.js';

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
