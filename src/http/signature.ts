/**
 * Webhook signature check (CONTRACT.md, Webhooks): `X-Service-Signature` is the hex HMAC-SHA256 of
 * the raw body bytes, optionally prefixed `sha256=`, made with the current or the previous secret.
 * Pure: no I/O, no logging, so it is tested with real HMACs alone.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type SignatureCheck =
  | { ok: true; /** Index in the usable secrets: 0 current, 1 previous. */ secretIndex: number }
  | { ok: false; reason: 'no_secret' | 'missing' | 'malformed' | 'mismatch' };

const DIGEST_BYTES = 32;
// The contract says lowercase; hex decoding is case-blind and the digest bytes are what is compared,
// so uppercase carries exactly the same proof and is accepted.
const HEX_DIGEST = /^[0-9a-f]{64}$/i;
const PREFIX = 'sha256=';

/** The header value the Service would send for `rawBody`: lowercase hex, no prefix. */
export function signWebhookBody(rawBody: Buffer | string, secret: string): string {
  return createHmac('sha256', secret).update(rawBody).digest('hex');
}

/**
 * Checks `header` against every usable secret. Timing depends only on the number of secrets and
 * the body length, never on how much of the signature matched: each secret's HMAC is computed and
 * compared with `timingSafeEqual` on 32-byte buffers, a malformed header is compared as a zero
 * placeholder, and the loop never exits early.
 */
export function verifyWebhookSignature(
  rawBody: Buffer,
  header: string | string[] | undefined,
  secrets: readonly string[],
): SignatureCheck {
  const usable = secrets.filter((s) => s.length > 0);
  if (usable.length === 0) return { ok: false, reason: 'no_secret' };

  const given = decodeSignatureHeader(header);
  const candidate = Buffer.isBuffer(given) ? given : Buffer.alloc(DIGEST_BYTES);
  let matched = -1;
  for (let i = 0; i < usable.length; i++) {
    const expected = createHmac('sha256', usable[i]!).update(rawBody).digest();
    const equal = timingSafeEqual(expected, candidate);
    if (equal && matched < 0) matched = i;
  }
  if (!Buffer.isBuffer(given)) return { ok: false, reason: given };
  return matched >= 0 ? { ok: true, secretIndex: matched } : { ok: false, reason: 'mismatch' };
}

/** The 32 digest bytes of a well-formed header, or why there are none. */
function decodeSignatureHeader(header: string | string[] | undefined): Buffer | 'missing' | 'malformed' {
  // Node joins repeated custom headers into one string; an array only comes from hand-built requests.
  if (Array.isArray(header)) return 'malformed';
  const value = header?.trim() ?? '';
  if (value === '') return 'missing';
  const hex = value.slice(0, PREFIX.length).toLowerCase() === PREFIX ? value.slice(PREFIX.length) : value;
  if (!HEX_DIGEST.test(hex)) return 'malformed';
  return Buffer.from(hex, 'hex');
}
