/**
 * Generated recordings: MPEG-audio-looking bytes made chunk by chunk as the socket drains, so a
 * recording is never held whole in memory (on either side, if the client streams too), and signed
 * download URLs for the optional 302 (a signed URL needs no bearer, like a CDN link).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Readable } from 'node:stream';
import { seededRandom } from './rng.js';

export const RECORDING_CONTENT_TYPE = 'audio/mpeg';
const CHUNK_BYTES = 64 * 1024;
/** MPEG-1 Layer III, 128 kbit/s, 44.1 kHz: 417-byte frames behind a 10-byte ID3v2 header. */
const ID3_HEADER = Buffer.from([0x49, 0x44, 0x33, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]);
const FRAME_HEADER = Buffer.from([0xff, 0xfb, 0x90, 0x64]);
const FRAME_BYTES = 417;

/** A stream of `size` bytes; `seed` fixes the payload so repeated downloads are identical. */
export function recordingStream(size: number, seed: number): Readable {
  const random = seededRandom(seed);
  let offset = 0;
  return new Readable({
    highWaterMark: CHUNK_BYTES,
    read() {
      if (offset >= size) {
        this.push(null);
        return;
      }
      const length = Math.min(CHUNK_BYTES, size - offset);
      const chunk = Buffer.allocUnsafe(length);
      for (let i = 0; i < length; i++) {
        const at = offset + i;
        if (at < ID3_HEADER.length) chunk[i] = ID3_HEADER[at] as number;
        else {
          const inFrame = (at - ID3_HEADER.length) % FRAME_BYTES;
          chunk[i] = inFrame < FRAME_HEADER.length ? (FRAME_HEADER[inFrame] as number) : (random() * 256) | 0;
        }
      }
      offset += length;
      this.push(chunk);
    },
  });
}

function signature(key: Buffer, callId: string, expiresMs: number): string {
  return createHmac('sha256', key).update(`${callId}\n${expiresMs}`).digest('hex');
}

/** Path and query of a signed download for `callId`, valid until `expiresMs`. */
export function signedRecordingPath(key: Buffer, callId: string, expiresMs: number): string {
  const sig = signature(key, callId, expiresMs);
  return `/_signed/recording/${encodeURIComponent(callId)}?expires=${expiresMs}&signature=${sig}`;
}

export type SignedCheck = 'ok' | 'invalid' | 'expired';

export function checkSignedRecording(
  key: Buffer,
  callId: string,
  params: URLSearchParams,
  nowMs: number,
): SignedCheck {
  const expires = Number(params.get('expires'));
  const given = Buffer.from(params.get('signature') ?? '', 'utf8');
  const wanted = Buffer.from(signature(key, callId, expires), 'utf8');
  if (!Number.isFinite(expires) || given.length !== wanted.length || !timingSafeEqual(given, wanted)) {
    return 'invalid';
  }
  return nowMs >= expires ? 'expired' : 'ok';
}
