import { describe, expect, it } from 'vitest';
import { deleteCursor, getCursor, saveCursor } from '../../src/store/cursorRepo.js';
import { DATABASE_KINDS, useMigratedDatabase } from './helpers.js';

const T0 = new Date('2026-03-02T10:00:00.000Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);

describe.each(DATABASE_KINDS)('CursorRepo on %s', (kind) => {
  const get = useMigratedDatabase(kind);

  it('saves a position, never moves last_call_created_at back, and forgets it on request', async () => {
    const { prisma } = get().db;
    expect(await getCursor(prisma, 'poll')).toBeNull();
    await saveCursor(prisma, { name: 'poll', cursor: 'c1', lastCallCreatedAt: at(100), now: at(0) });
    const later = await saveCursor(prisma, {
      name: 'poll',
      cursor: 'c2',
      lastCallCreatedAt: at(50),
      now: at(1),
    });
    expect(later).toEqual({ name: 'poll', cursor: 'c2', lastCallCreatedAt: at(100), updatedAt: at(1) });
    await saveCursor(prisma, { name: 'poll', cursor: null, now: at(2) });
    expect(await getCursor(prisma, 'poll')).toEqual({
      name: 'poll',
      cursor: null,
      lastCallCreatedAt: at(100),
      updatedAt: at(2),
    });
    expect(await deleteCursor(prisma, 'poll')).toBe(true);
    expect(await getCursor(prisma, 'poll')).toBeNull();
  });
});
