import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (refresh tokens in the database), sealed with AES-256-GCM from node:crypto under
 * the admin's CREDENTIALS_KEY. GCM authenticates as it encrypts: a wrong key or a changed value
 * fails to open instead of yielding garbage; the `context` (e.g. the CRM name) is bound in as
 * associated data, so a value cannot be moved to another row.
 */
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** What CREDENTIALS_KEY must be; the message names how to make one. */
export const CREDENTIALS_KEY_FORMAT =
  'expected 32 random bytes as base64 or 64 hex digits (make one with: openssl rand -base64 32)';

/** The 32-byte key in `text` (base64 or hex), or undefined when it is not one. */
export function parseCredentialsKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  const bytes = /^[0-9a-f]{64}$/i.test(trimmed)
    ? Buffer.from(trimmed, 'hex')
    : /^[A-Za-z0-9+/]{43}=?$/.test(trimmed)
      ? Buffer.from(trimmed, 'base64')
      : undefined;
  return bytes?.length === 32 ? bytes : undefined;
}

export function seal(key: Buffer, plaintext: string, context: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
}

/** Opens what `seal` made; throws (without echoing anything) on a wrong key, context or value. */
export function open(key: Buffer, sealed: string, context: string): string {
  const [version, payload] = sealed.split(':');
  if (version !== VERSION || !payload) throw new Error('sealed value: unknown format');
  const raw = Buffer.from(payload, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    throw new Error('sealed value: cannot be opened with this CREDENTIALS_KEY');
  }
}

/** A keyed fingerprint of a secret: compares two secrets without storing either. */
export function fingerprint(key: Buffer, secret: string): string {
  return createHmac('sha256', key).update(secret).digest('base64url');
}
