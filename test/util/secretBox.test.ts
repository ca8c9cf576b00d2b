import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fingerprint, open, parseCredentialsKey, seal } from '../../src/util/secretBox.js';

describe('secretBox (AES-256-GCM under CREDENTIALS_KEY)', () => {
  const key = randomBytes(32);

  it('opens what it sealed, and the sealed text does not show the secret', () => {
    const sealed = seal(key, '5Aep-refresh-token', 'salesforce');
    expect(sealed).toMatch(/^v1:/);
    expect(sealed).not.toContain('5Aep');
    expect(seal(key, '5Aep-refresh-token', 'salesforce')).not.toBe(sealed); // a fresh IV each time
    expect(open(key, sealed, 'salesforce')).toBe('5Aep-refresh-token');
  });

  it('refuses another key, another row (context) or a changed value, without echoing anything', () => {
    const sealed = seal(key, '5Aep-refresh-token', 'salesforce');
    expect(() => open(randomBytes(32), sealed, 'salesforce')).toThrow(
      /cannot be opened with this CREDENTIALS_KEY/,
    );
    expect(() => open(key, sealed, 'hubspot')).toThrow(/cannot be opened/);
    const raw = Buffer.from(sealed.slice(3), 'base64');
    raw[raw.length - 1]! ^= 1;
    expect(() => open(key, `v1:${raw.toString('base64')}`, 'salesforce')).toThrow(/cannot be opened/);
  });

  it('reads 32-byte keys as base64 or hex, and nothing else', () => {
    expect(parseCredentialsKey(key.toString('base64'))?.equals(key)).toBe(true);
    expect(parseCredentialsKey(key.toString('hex'))?.equals(key)).toBe(true);
    expect(parseCredentialsKey(randomBytes(16).toString('base64'))).toBeUndefined();
    expect(parseCredentialsKey('correct horse battery staple')).toBeUndefined();
  });

  it('fingerprints a secret by key: equal for the same secret, different across keys', () => {
    expect(fingerprint(key, 'a')).toBe(fingerprint(key, 'a'));
    expect(fingerprint(key, 'a')).not.toBe(fingerprint(key, 'b'));
    expect(fingerprint(randomBytes(32), 'a')).not.toBe(fingerprint(key, 'a'));
  });
});
