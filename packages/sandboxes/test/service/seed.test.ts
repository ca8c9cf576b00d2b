import { describe, expect, it } from 'vitest';
import type { Readable } from 'node:stream';
import { recordingStream } from '../../src/service/recording.js';
import { SANDBOX_PARTICIPANTS, seedCalls } from '../../src/service/seed.js';
import { callToJson } from '../../src/service/types.js';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

describe('seedCalls', () => {
  it('is deterministic for a seed and differs between seeds', () => {
    const a = seedCalls({ count: 25, seed: 1, nowMs: NOW });
    const b = seedCalls({ count: 25, seed: 1, nowMs: NOW });
    const c = seedCalls({ count: 25, seed: 2, nowMs: NOW });
    expect(a.calls.map(callToJson)).toEqual(b.calls.map(callToJson));
    expect(a.calls.map((x) => x.transcript)).toEqual(b.calls.map((x) => x.transcript));
    expect(a.calls.map((x) => x.id)).not.toEqual(c.calls.map((x) => x.id));
  });

  it('starts with the CRM test participants, analysed, oldest first', () => {
    const { calls } = seedCalls({ count: 25, seed: 9, nowMs: NOW });
    expect(calls.slice(0, 6).map((c) => c.participant)).toEqual(SANDBOX_PARTICIPANTS);
    expect(calls.slice(0, 6).every((c) => c.status === 'analyzed')).toBe(true);
    expect(SANDBOX_PARTICIPANTS.map((p) => p.email)).toContain('Bob.Smith@ACME.example');
    expect(SANDBOX_PARTICIPANTS.find((p) => p.email === 'sam@gmail.com')?.company).toBeUndefined();
    const times = calls.map((c) => c.createdAtMs);
    expect([...times].sort((x, y) => x - y)).toEqual(times);
    expect(Math.max(...times)).toBeLessThan(NOW);
  });

  it('mixes statuses with consistent fields, scores in 0..100', () => {
    const { calls } = seedCalls({ count: 60, seed: 5, nowMs: NOW });
    const statuses = new Set(calls.map((c) => c.status));
    for (const s of ['analyzed', 'in_progress', 'scheduled']) expect(statuses).toContain(s);
    expect(calls.filter((c) => c.status === 'analyzed').length).toBeGreaterThan(calls.length / 2);
    for (const call of calls.map(callToJson)) {
      expect(call.scoring !== undefined).toBe(call.status === 'analyzed');
      for (const v of Object.values(call.scoring ?? {})) {
        expect(Number.isInteger(v) && v >= 0 && v <= 100).toBe(true);
      }
      if (call.status === 'analyzed')
        expect(call.objections_handled).toBeLessThanOrEqual(call.objections_detected ?? 0);
      expect(call.duration_seconds === undefined).toBe(
        call.status === 'scheduled' || call.status === 'in_progress',
      );
    }
    const emails = calls.map((c) => c.participant.email);
    expect(
      emails.some((e) => e !== e.toLowerCase() && !SANDBOX_PARTICIPANTS.some((p) => p.email === e)),
    ).toBe(true);
    expect(emails.some((e) => /@(gmail|outlook|yahoo)\.com$|@proton\.me$/.test(e))).toBe(true);
  });
});

describe('recordingStream', () => {
  it('produces exactly the size asked, in chunks of at most 64 KiB, the same bytes each time', async () => {
    const sizes: number[] = [];
    const collect = async (stream: Readable): Promise<Buffer> => {
      const chunks: Buffer[] = [];
      for await (const chunk of stream) {
        sizes.push((chunk as Buffer).length);
        chunks.push(chunk as Buffer);
      }
      return Buffer.concat(chunks);
    };
    const a = await collect(recordingStream(300_001, 4));
    const b = await collect(recordingStream(300_001, 4));
    expect(a.length).toBe(300_001);
    expect(a.equals(b)).toBe(true);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(64 * 1024);
    expect(a.subarray(10, 12)).toEqual(Buffer.from([0xff, 0xfb]));
  });
});
