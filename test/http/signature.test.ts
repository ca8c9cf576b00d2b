import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signWebhookBody, verifyWebhookSignature } from '../../src/http/signature.js';

const CURRENT = 'whsec_current_0123456789';
const PREVIOUS = 'whsec_previous_9876543210';
const body = Buffer.from('{"id":"evt_1","type":"call.started","created_at":"2026-01-01T00:00:00Z"}');
const hmac = (secret: string, bytes: Buffer = body) =>
  createHmac('sha256', secret).update(bytes).digest('hex');

describe('verifyWebhookSignature', () => {
  it('accepts the HMAC made with the current secret', () => {
    expect(verifyWebhookSignature(body, hmac(CURRENT), [CURRENT, PREVIOUS])).toEqual({
      ok: true,
      secretIndex: 0,
    });
  });

  it('accepts the HMAC made with the previous secret during a rotation', () => {
    expect(verifyWebhookSignature(body, hmac(PREVIOUS), [CURRENT, PREVIOUS])).toEqual({
      ok: true,
      secretIndex: 1,
    });
  });

  it('rejects a signature made with the previous secret once it is no longer configured', () => {
    expect(verifyWebhookSignature(body, hmac(PREVIOUS), [CURRENT])).toEqual({
      ok: false,
      reason: 'mismatch',
    });
  });

  it('rejects a real HMAC made with a wrong secret', () => {
    expect(verifyWebhookSignature(body, hmac('not-the-secret'), [CURRENT, PREVIOUS])).toEqual({
      ok: false,
      reason: 'mismatch',
    });
  });

  it('rejects the right signature over different bytes (one byte changed)', () => {
    const tampered = Buffer.from(body);
    tampered[10] = tampered[10]! ^ 1;
    expect(verifyWebhookSignature(tampered, hmac(CURRENT), [CURRENT])).toEqual({
      ok: false,
      reason: 'mismatch',
    });
  });

  it('rejects a signature with its last hex digit changed', () => {
    const sig = hmac(CURRENT);
    const wrong = sig.slice(0, -1) + (sig.endsWith('0') ? '1' : '0');
    expect(verifyWebhookSignature(body, wrong, [CURRENT])).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('accepts the optional sha256= prefix, in any case', () => {
    expect(verifyWebhookSignature(body, `sha256=${hmac(CURRENT)}`, [CURRENT]).ok).toBe(true);
    expect(verifyWebhookSignature(body, `SHA256=${hmac(CURRENT)}`, [CURRENT]).ok).toBe(true);
  });

  it('rejects a prefix other than sha256=', () => {
    expect(verifyWebhookSignature(body, `sha1=${hmac(CURRENT)}`, [CURRENT])).toEqual({
      ok: false,
      reason: 'malformed',
    });
  });

  it('accepts uppercase hex: the same digest bytes', () => {
    expect(verifyWebhookSignature(body, hmac(CURRENT).toUpperCase(), [CURRENT]).ok).toBe(true);
  });

  it('treats an absent or empty header as missing', () => {
    expect(verifyWebhookSignature(body, undefined, [CURRENT])).toEqual({ ok: false, reason: 'missing' });
    expect(verifyWebhookSignature(body, '', [CURRENT])).toEqual({ ok: false, reason: 'missing' });
    expect(verifyWebhookSignature(body, '   ', [CURRENT])).toEqual({ ok: false, reason: 'missing' });
  });

  it('rejects wrong lengths, non-hex and repeated headers as malformed', () => {
    const sig = hmac(CURRENT);
    expect(verifyWebhookSignature(body, sig.slice(0, 63), [CURRENT]).ok).toBe(false);
    expect(verifyWebhookSignature(body, sig.slice(0, 62), [CURRENT])).toEqual({
      ok: false,
      reason: 'malformed',
    });
    expect(verifyWebhookSignature(body, `${sig}00`, [CURRENT])).toEqual({ ok: false, reason: 'malformed' });
    expect(verifyWebhookSignature(body, `${sig.slice(0, 63)}g`, [CURRENT])).toEqual({
      ok: false,
      reason: 'malformed',
    });
    expect(verifyWebhookSignature(body, 'sha256=', [CURRENT])).toEqual({ ok: false, reason: 'malformed' });
    expect(verifyWebhookSignature(body, [sig, sig], [CURRENT])).toEqual({ ok: false, reason: 'malformed' });
    // A base64 digest is 32 bytes too, but not the contract's encoding.
    const b64 = createHmac('sha256', CURRENT).update(body).digest('base64');
    expect(verifyWebhookSignature(body, b64, [CURRENT])).toEqual({ ok: false, reason: 'malformed' });
  });

  it('says so when no secret is configured, ignoring empty entries', () => {
    expect(verifyWebhookSignature(body, hmac(''), [])).toEqual({ ok: false, reason: 'no_secret' });
    expect(verifyWebhookSignature(body, hmac(''), ['', ''])).toEqual({ ok: false, reason: 'no_secret' });
    expect(verifyWebhookSignature(body, hmac(PREVIOUS), ['', PREVIOUS])).toEqual({
      ok: true,
      secretIndex: 0,
    });
  });

  it('verifies an empty body', () => {
    const empty = Buffer.alloc(0);
    expect(verifyWebhookSignature(empty, hmac(CURRENT, empty), [CURRENT]).ok).toBe(true);
    expect(verifyWebhookSignature(empty, hmac(CURRENT), [CURRENT]).ok).toBe(false);
  });
});

describe('signWebhookBody', () => {
  it('is the lowercase hex HMAC-SHA256 of the bytes', () => {
    const sig = signWebhookBody(body, CURRENT);
    expect(sig).toMatch(/^[0-9a-f]{64}$/);
    expect(sig).toBe(hmac(CURRENT));
    expect(signWebhookBody(body.toString('utf8'), CURRENT)).toBe(sig);
  });
});
