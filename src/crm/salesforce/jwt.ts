import { createPrivateKey, sign } from 'node:crypto';

export interface JwtBearerClaims {
  /** The connected app's consumer key. */
  clientId: string;
  /** The Salesforce username the token is for. */
  username: string;
  /** The login URL (https://login.salesforce.com, https://test.salesforce.com or My Domain). */
  audience: string;
  nowMs: number;
  /** Salesforce wants `exp` no more than three minutes ahead. */
  lifetimeS?: number;
}

/**
 * The RS256-signed assertion of the OAuth 2.0 JWT bearer flow (jsforce does not sign JWTs).
 * Environment variables often carry PEM keys with literal "\n"; those are turned into newlines.
 */
export function signJwtAssertion(claims: JwtBearerClaims, privateKeyPem: string): string {
  const key = createPrivateKey(
    privateKeyPem.includes('\\n') ? privateKeyPem.replace(/\\n/g, '\n') : privateKeyPem,
  );
  const header = { alg: 'RS256', typ: 'JWT' };
  const payload = {
    iss: claims.clientId,
    sub: claims.username,
    aud: claims.audience.replace(/\/$/, ''),
    exp: Math.floor(claims.nowMs / 1000) + (claims.lifetimeS ?? 180),
  };
  const encode = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const input = `${encode(header)}.${encode(payload)}`;
  const signature = sign('sha256', Buffer.from(input), key).toString('base64url');
  return `${input}.${signature}`;
}
