import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { FastifyRequest } from 'fastify';
import { BodyTooLargeError, boundedBodyParser } from '../../src/http/boundedBody.js';

/** Runs the parser over `chunks` written to a real stream; resolves with what it answered. */
function parse(limit: number, declared: number | undefined, chunks: Buffer[]) {
  const request = { headers: declared === undefined ? {} : { 'content-length': String(declared) } };
  const payload = new PassThrough();
  const result = new Promise<{ err: Error | null; body?: Buffer }>((resolve) =>
    boundedBodyParser(limit)(request as unknown as FastifyRequest, payload, (err, body) =>
      resolve({ err, body }),
    ),
  );
  for (const c of chunks) payload.write(c);
  payload.end();
  return result;
}

/** A chunk that is the whole of its own ArrayBuffer, as the HTTP parser hands them out. */
const ownChunk = (size: number) => Buffer.from(new ArrayBuffer(size)).fill(0x78);

describe('boundedBodyParser', () => {
  it('keeps a body within the limit intact', async () => {
    const chunks = [ownChunk(100), ownChunk(50)];
    const { err, body } = await parse(1024, 150, chunks);
    expect(err).toBeNull();
    expect(body).toEqual(Buffer.alloc(150, 0x78));
    expect(chunks.every((c) => c.buffer.byteLength > 0)).toBe(true);
  });

  it('frees each chunk of a body declared over the limit as it is discarded', async () => {
    const chunks = [ownChunk(1000), ownChunk(1000), ownChunk(1000)];
    const { err } = await parse(1024, 3000, chunks);
    expect(err).toBeInstanceOf(BodyTooLargeError);
    expect((err as BodyTooLargeError).unread).toBe(false);
    // Detached: the memory went back now, not at some later GC.
    expect(chunks.map((c) => c.buffer.byteLength)).toEqual([0, 0, 0]);
  });

  it('frees what it had kept once an undeclared body crosses the limit', async () => {
    const chunks = [ownChunk(800), ownChunk(800)];
    const { err } = await parse(1024, undefined, chunks);
    expect(err).toBeInstanceOf(BodyTooLargeError);
    expect(chunks.map((c) => c.buffer.byteLength)).toEqual([0, 0]);
  });

  it('leaves a chunk that shares its ArrayBuffer with other data alone', async () => {
    const shared = Buffer.alloc(4096, 0x78);
    const chunk = shared.subarray(0, 2048);
    const { err } = await parse(1024, 2048, [chunk]);
    expect(err).toBeInstanceOf(BodyTooLargeError);
    expect(shared.buffer.byteLength).toBe(4096);
  });
});
