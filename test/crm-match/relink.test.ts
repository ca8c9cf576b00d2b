import { describe, expect, it } from 'vitest';
import { linkChanges, planAssociations, planTaskUpdate } from '../../src/crm/relink.js';
import { describe as describeChange } from '../../src/pipelines/rematch.js';

const none = { contact: [], company: [], deal: [] };

describe('linkChanges: which slots move', () => {
  it('names only the slots whose record differs', () => {
    expect(
      linkChanges(
        { contactId: '1', companyId: '10', dealId: '100' },
        { contactId: '1', companyId: '10', dealId: '200' },
      ),
    ).toEqual([{ kind: 'deal', from: '100', to: '200' }]);
  });

  it('is empty for the same records, and treats an empty id as none', () => {
    expect(linkChanges({ contactId: '1', dealId: '' }, { contactId: '1' })).toEqual([]);
  });

  it('a slot that gains or loses its record moves', () => {
    expect(linkChanges({ contactId: '1' }, { contactId: '1', dealId: '5' })).toEqual([
      { kind: 'deal', from: undefined, to: '5' },
    ]);
    expect(linkChanges({ companyId: '9' }, {})).toEqual([{ kind: 'company', from: '9', to: undefined }]);
  });
});

describe('planAssociations (HubSpot): create what is missing, archive what was ours', () => {
  const move = { from: { contactId: '1', dealId: '100' }, to: { contactId: '1', dealId: '200' } };

  it('links the new deal and unlinks the old one', () => {
    expect(planAssociations(move, { ...none, contact: ['1'], deal: ['100'] })).toEqual([
      { kind: 'deal', create: '200', archive: ['100'] },
    ]);
  });

  it('after a crash between create and archive, only archives', () => {
    expect(planAssociations(move, { ...none, contact: ['1'], deal: ['100', '200'] })).toEqual([
      { kind: 'deal', create: undefined, archive: ['100'] },
    ]);
  });

  it('plans nothing once the CRM shows the new links (a second run)', () => {
    expect(planAssociations(move, { ...none, contact: ['1'], deal: ['200'] })).toEqual([]);
  });

  it('keeps links it did not make: a deal linked by hand stays', () => {
    expect(planAssociations(move, { ...none, contact: ['1'], deal: ['100', '777'] })).toEqual([
      { kind: 'deal', create: '200', archive: ['100'] },
    ]);
  });

  it('re-creates a link the new decision keeps when someone removed it', () => {
    expect(planAssociations(move, { ...none, deal: ['200'] })).toEqual([
      { kind: 'contact', create: '1', archive: [] },
    ]);
  });
});

describe('planTaskUpdate (Salesforce): the Who/What fields that must change', () => {
  it('points WhatId at the new opportunity', () => {
    expect(
      planTaskUpdate(
        {
          from: { contactId: 'C1', companyId: 'A1', dealId: 'O1' },
          to: { contactId: 'C1', companyId: 'A1', dealId: 'O2' },
        },
        { WhoId: 'C1', WhatId: 'O1' },
      ),
    ).toEqual({ WhatId: 'O2' });
  });

  it('is null once the Task already shows the new links', () => {
    expect(
      planTaskUpdate(
        { from: { contactId: 'C1', dealId: 'O1' }, to: { contactId: 'C1', dealId: 'O2' } },
        { WhoId: 'C1', WhatId: 'O2' },
      ),
    ).toBeNull();
  });

  it('without a deal, the What is the account; a contact change moves the Who', () => {
    expect(
      planTaskUpdate(
        {
          from: { contactId: 'C1', companyId: 'A1', dealId: 'O1' },
          to: { contactId: 'C2', companyId: 'A2' },
        },
        { WhoId: 'C1', WhatId: 'O1' },
      ),
    ).toEqual({ WhoId: 'C2', WhatId: 'A2' });
  });

  it('clears an old link with no successor only when the Task still names it', () => {
    const move = { from: { contactId: 'C1', dealId: 'O1' }, to: { contactId: 'C1', companyId: undefined } };
    expect(planTaskUpdate(move, { WhoId: 'C1', WhatId: 'O1' })).toEqual({ WhatId: null });
    expect(planTaskUpdate(move, { WhoId: 'C1', WhatId: 'O9' })).toBeNull();
  });

  it('a Task on a lead names no What', () => {
    expect(
      planTaskUpdate(
        {
          from: { contactId: 'C1', contactType: 'contact', companyId: 'A1' },
          to: { contactId: 'L1', contactType: 'lead' },
        },
        { WhoId: 'C1', WhatId: 'A1' },
      ),
    ).toEqual({ WhoId: 'L1', WhatId: null });
  });
});

describe('the change as the summary and history show it', () => {
  it('names companies and deals by label, contacts by id only', () => {
    const choice = (type: 'contact' | 'company' | 'deal', id: string, label: string) => ({
      type,
      id,
      label,
      rule: 'none' as const,
      reason: '',
      rejected: [],
    });
    const decision = (deal: string, label: string) => ({
      crm: 'hubspot' as const,
      matchedBy: 'email' as const,
      contact: choice('contact', '1', 'Jane Doe'),
      company: choice('company', '10', 'Acme'),
      deal: choice('deal', deal, label),
    });
    const text = describeChange(
      [
        { kind: 'contact', from: '1', to: '2' },
        { kind: 'deal', from: '100', to: '200' },
      ],
      decision('100', 'Acme - Add-on'),
      decision('200', 'Acme - Expansion'),
    );
    expect(text).toBe('contact [1] → [2]; deal Acme - Add-on [100] → Acme - Expansion [200]');
    expect(text).not.toContain('Jane');
  });
});
