/**
 * Who may reach the operator surface (/status, /admin/*, /console): with ADMIN_TOKEN set, a
 * request carrying the token (`Authorization: Bearer`, used by the CLI) or the console's session
 * cookie; without it, direct loopback requests only. Pure decisions here; the Fastify hook is in
 * operatorScope.ts.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ConsoleSessions } from '../store/consoleSessions.js';

export const SESSION_COOKIE = 'crm_sync_session';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

export function isLoopback(address: string | undefined): boolean {
  return LOOPBACK.has(address ?? '');
}

export interface AccessRequest {
  authorization?: string | undefined;
  cookie?: string | undefined;
  remoteAddress?: string | undefined;
  /** The request carries X-Forwarded-For, Forwarded or X-Real-IP (it came through a proxy). */
  forwarded: boolean;
}

export type AccessDecision =
  | { allowed: true; via: 'token' | 'session' | 'loopback' }
  | { allowed: false; reason: 'sign_in' | 'loopback_only' };

/**
 * What the access rules need: the admin token, the console's server-side sessions (the cookie holds
 * a random session id, never the token), and the CSRF token console forms carry, derived from the
 * admin token. Without ADMIN_TOKEN a random per-process secret stands in, so loopback forms are
 * still protected against cross-site posts.
 */
export interface AccessKeys {
  adminToken: string | undefined;
  /** Sign-ins; without them (no database at hand) no session cookie is accepted. */
  sessions: ConsoleSessions | undefined;
  csrf: string;
  /** PUBLIC_URL's origin: with it, browser requests must name this host and post from this origin. */
  publicOrigin: string | undefined;
  /** TRUST_PROXY: X-Forwarded-Proto (and X-Forwarded-For for throttling) are believed. */
  trustProxy: boolean;
}

export interface AccessOptions {
  publicOrigin?: string | undefined;
  sessions?: ConsoleSessions | undefined;
  trustProxy?: boolean | undefined;
}

export function accessKeys(adminToken: string | undefined, options: AccessOptions = {}): AccessKeys {
  const secret = adminToken ?? randomBytes(32).toString('hex');
  return {
    adminToken,
    sessions: adminToken === undefined ? undefined : options.sessions,
    csrf: hmac(secret, 'crm-sync console csrf'),
    publicOrigin: options.publicOrigin,
    trustProxy: options.trustProxy ?? false,
  };
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether a browser-borne request names a host the operator surface answers as. DNS rebinding
 * points an attacker's name at 127.0.0.1, and the browser then sends `Host: attacker.example`: in
 * loopback-only mode only the loopback names pass; with PUBLIC_URL only its host does. (A bearer
 * token is not ambient, so the CLI's requests are not held to this.)
 */
export function hostAllowed(keys: AccessKeys, host: string | undefined): boolean {
  if (host === undefined || host === '') return false;
  try {
    if (keys.adminToken === undefined) return LOOPBACK_HOSTS.has(new URL(`http://${host}`).hostname);
    if (keys.publicOrigin === undefined) return true;
    const expected = new URL(keys.publicOrigin);
    // Parsed with the public scheme, so a default port is spelled the same on both sides.
    return new URL(`${expected.protocol}//${host}`).host === expected.host;
  } catch {
    return false;
  }
}

export async function decideAccess(keys: AccessKeys, req: AccessRequest): Promise<AccessDecision> {
  if (keys.adminToken !== undefined) {
    const bearer = /^Bearer (.+)$/i.exec(req.authorization ?? '')?.[1];
    if (bearer !== undefined && sameSecret(bearer, keys.adminToken)) return { allowed: true, via: 'token' };
    const session = sessionIdOf(req.cookie);
    if (session !== undefined && (await keys.sessions?.check(session))) {
      return { allowed: true, via: 'session' };
    }
    return { allowed: false, reason: 'sign_in' };
  }
  // A request relayed by a proxy on this host also comes from loopback: refuse anything that
  // carries forwarding headers, so the operator routes are never reachable through one.
  if (isLoopback(req.remoteAddress) && !req.forwarded) return { allowed: true, via: 'loopback' };
  return { allowed: false, reason: 'loopback_only' };
}

/** The token an admin typed on the sign-in page. */
export function tokenMatches(keys: AccessKeys, typed: string): boolean {
  return keys.adminToken !== undefined && sameSecret(typed, keys.adminToken);
}

/**
 * A state-changing request must come from this site: browsers send Sec-Fetch-Site and Origin on
 * POSTs, and a cross-site form or script would carry another origin. The CLI sends neither.
 */
export function isSameOrigin(
  headers: {
    origin?: string | undefined;
    host?: string | undefined;
    secFetchSite?: string | undefined;
  },
  /** PUBLIC_URL's origin, which the Origin header must then equal. */
  expectedOrigin?: string,
): boolean {
  if (headers.secFetchSite !== undefined && !['same-origin', 'none'].includes(headers.secFetchSite)) {
    return false;
  }
  if (headers.origin === undefined) return true;
  try {
    if (expectedOrigin !== undefined) return new URL(headers.origin).origin === expectedOrigin;
    // Through URL both sides, so a default port (:80) is spelled the same way.
    return new URL(headers.origin).host === new URL(`http://${headers.host}`).host;
  } catch {
    return false;
  }
}

export function csrfMatches(keys: AccessKeys, given: unknown): boolean {
  return typeof given === 'string' && sameSecret(given, keys.csrf);
}

export function sessionIdOf(cookieHeader: string | undefined): string | undefined {
  const id = parseCookies(cookieHeader)[SESSION_COOKIE];
  return id === '' ? undefined : id;
}

/**
 * Whether the request reached us over TLS: its own socket, or a proxy's X-Forwarded-Proto when
 * TRUST_PROXY says a proxy we trust sets it (anyone else could send the header).
 */
export function cameOverTls(
  keys: Pick<AccessKeys, 'trustProxy'>,
  req: { encrypted: boolean; forwardedProto: string | undefined },
): boolean {
  if (req.encrypted) return true;
  return keys.trustProxy && req.forwardedProto?.split(',')[0]?.trim().toLowerCase() === 'https';
}

/** The cookie of a new session; it lasts no longer than the session's absolute expiry. */
export function sessionCookie(id: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${id}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`;
}

export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

function hmac(secret: string, label: string): string {
  return createHmac('sha256', secret).update(label).digest('base64url');
}

/** Constant-time comparison; hashing first makes the lengths equal. */
function sameSecret(a: string, b: string): boolean {
  const digest = (v: string) => createHmac('sha256', 'crm-sync compare').update(v).digest();
  return timingSafeEqual(digest(a), digest(b));
}
