import { describe, expect, it } from 'vitest';
import {
  listFollowupDrafts,
  listFollowupDraftsOf,
  markFollowupsWritten,
  saveFollowupDrafts,
} from '../../src/store/followupRepo.js';
import { DATABASE_KINDS, useMigratedDatabase } from './helpers.js';

const T0 = new Date(Date.UTC(2026, 0, 5, 12));
const draft = (id: string) => ({
  id,
  subject: `Subject ${id}`,
  body: 'Thanks for the call',
  to: ['a@b.example'],
});

describe.each(DATABASE_KINDS)('follow-up drafts of a write-back batch (%s)', (kind) => {
  const database = useMigratedDatabase(kind);

  it('lists a batch’s drafts in one read and marks only the given call’s drafts written', async () => {
    const db = database().db.prisma;
    await saveFollowupDrafts(db, 'call_f1', [draft('d1'), draft('d2')], T0);
    await saveFollowupDrafts(db, 'call_f2', [draft('d1')], T0);

    const byCall = await listFollowupDraftsOf(db, ['call_f1', 'call_f2', 'call_none']);
    expect(byCall.get('call_f1')?.map((d) => d.draftId)).toEqual(['d1', 'd2']);
    expect(byCall.get('call_f2')?.map((d) => d.draftId)).toEqual(['d1']);
    expect(byCall.has('call_none')).toBe(false);

    await markFollowupsWritten(
      db,
      'call_f1',
      [
        { draftId: 'd1', crmId: 'note_1' },
        { draftId: 'd2', crmId: 'note_2' },
      ],
      T0,
    );
    expect((await listFollowupDrafts(db, 'call_f1')).map((d) => d.crmId)).toEqual(['note_1', 'note_2']);
    // The same draft id on another call is left alone.
    expect((await listFollowupDrafts(db, 'call_f2')).map((d) => d.crmId)).toEqual([null]);
  });
});
