import { describe, expect, it } from 'vitest';
import { showsValues } from '../../src/deals/compare.js';

const sent = {
  crmsync_last_call_date: '2026-01-04',
  crmsync_last_call_score: 88,
  crmsync_average_score: 72.5,
  crmsync_last_next_step: null,
};

describe('whether a deal already shows the values crm-sync would write', () => {
  it('HubSpot: every value as text, unset as ""', () => {
    expect(
      showsValues(
        {
          crmsync_last_call_date: '2026-01-04',
          crmsync_last_call_score: '88',
          crmsync_average_score: '72.5',
          crmsync_last_next_step: '',
        },
        sent,
      ),
    ).toBe(true);
  });

  it('Salesforce: numbers as numbers, empty as null', () => {
    const shown = { CrmSync_Last_Call_Score__c: 88, CrmSync_Last_Next_Step__c: null };
    expect(showsValues(shown, { CrmSync_Last_Call_Score__c: 88, CrmSync_Last_Next_Step__c: null })).toBe(
      true,
    );
  });

  it('any difference, a value where none was sent, or a missing value, is not shown', () => {
    expect(showsValues({ ...sent, crmsync_last_call_score: '87' }, sent)).toBe(false);
    expect(showsValues({ ...sent, crmsync_last_next_step: 'Call back' }, sent)).toBe(false);
    expect(showsValues({ ...sent, crmsync_last_call_date: undefined }, sent)).toBe(false);
    expect(showsValues({ ...sent, crmsync_average_score: 'n/a' }, sent)).toBe(false);
  });
});
