import { createHmac, randomBytes, verify, type KeyObject } from 'node:crypto';
import type { Clock } from '../clock.js';

export interface OAuthApp {
  clientId: string;
  clientSecret: string;
  /** The JWT bearer flow's certificate key: assertions must be signed by its private half. */
  jwtPublicKey: KeyObject;
}

export interface TokenResponse {
  status: number;
  body: Record<string, unknown>;
}

/** Salesforce accepts `exp` up to a few minutes ahead; this allows five, clock skew included. */
const MAX_ASSERTION_LIFETIME_S = 300;
const JWT_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/**
 * Access tokens and the OAuth token endpoint (`POST /services/oauth2/token`): the refresh-token,
 * JWT bearer and client credentials grants, answering like Salesforce (`instance_url`, `id`,
 * `signature`), as Salesforce Help "OAuth 2.0 Refresh Token Flow for Renewed Sessions", "OAuth 2.0
 * JWT Bearer Flow for Server-to-Server Integration" and "OAuth 2.0 Client Credentials Flow for
 * Server-to-Server Integration" describe them.
 */
export class TokenIssuer {
  private tokens = new Map<string, { userId: string; expiresAt: number }>();
  private refreshTokens = new Map<string, string>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly orgId: string,
    private readonly app: OAuthApp,
    /** Maps a username (JWT `sub`) to a user id, or undefined when unknown. */
    private readonly userByName: (username: string) => string | undefined,
    /**
     * The app's Run As user for the client credentials flow; undefined when the app does not have
     * Enable Client Credentials Flow on.
     */
    public clientCredentialsUserId: string | undefined,
  ) {}

  issue(userId: string): string {
    const token = `${this.orgId}!${randomBytes(24).toString('base64url')}`;
    this.tokens.set(token, { userId, expiresAt: this.clock.now() + this.ttlMs });
    return token;
  }

  issueRefreshToken(userId: string): string {
    const token = `5Aep${randomBytes(24).toString('base64url')}`;
    this.refreshTokens.set(token, userId);
    return token;
  }

  /** Each refresh retires the presented refresh token and answers with a new one. */
  rotateRefreshTokens = false;

  /** While set, every access token and grant is refused (the connected app's access revoked). */
  private revoked = false;

  revoke(): void {
    this.revoked = true;
  }

  restore(): void {
    this.revoked = false;
  }

  /** The user behind a live access token, or undefined (unknown, expired or revoked). */
  check(token: string | undefined): string | undefined {
    if (!token || this.revoked) return undefined;
    const entry = this.tokens.get(token);
    if (!entry) return undefined;
    if (this.clock.now() >= entry.expiresAt) {
      this.tokens.delete(token);
      return undefined;
    }
    return entry.userId;
  }

  /** Ends every access token now (refresh tokens stay valid), to test a session that expired. */
  expireAll(): void {
    this.tokens.clear();
  }

  handle(form: URLSearchParams, baseUrl: string): TokenResponse {
    if (this.revoked) return oauthError('invalid_grant', 'expired access/refresh token');
    const grant = form.get('grant_type');
    if (grant === 'refresh_token') return this.refreshGrant(form, baseUrl);
    if (grant === JWT_GRANT) return this.jwtGrant(form, baseUrl);
    if (grant === 'client_credentials') return this.clientCredentialsGrant(form, baseUrl);
    return oauthError('unsupported_grant_type', 'grant type not supported');
  }

  private refreshGrant(form: URLSearchParams, baseUrl: string): TokenResponse {
    if (form.get('client_id') !== this.app.clientId)
      return oauthError('invalid_client_id', 'client identifier invalid');
    const secret = form.get('client_secret');
    if (secret !== null && secret !== this.app.clientSecret)
      return oauthError('invalid_client', 'invalid client credentials');
    const presented = form.get('refresh_token') ?? '';
    const userId = this.refreshTokens.get(presented);
    if (!userId) return oauthError('invalid_grant', 'expired access/refresh token');
    const answer = this.success(userId, baseUrl);
    if (this.rotateRefreshTokens) {
      // Refresh token rotation (Salesforce Help, "Refresh Token Rotation", an External Client App
      // OAuth policy): the presented token is retired, the answer carries its successor.
      this.refreshTokens.delete(presented);
      answer.body.refresh_token = this.issueRefreshToken(userId);
    }
    return answer;
  }

  /**
   * The client credentials grant: the app's consumer key and secret buy an access token for its
   * Run As user; no refresh token is issued, the client asks again when the token expires.
   * Salesforce answers "no client credentials user enabled" when the flow has no Run As user.
   */
  private clientCredentialsGrant(form: URLSearchParams, baseUrl: string): TokenResponse {
    if (form.get('client_id') !== this.app.clientId)
      return oauthError('invalid_client_id', 'client identifier invalid');
    if (form.get('client_secret') !== this.app.clientSecret)
      return oauthError('invalid_client', 'invalid client credentials');
    if (!this.clientCredentialsUserId)
      return oauthError('invalid_grant', 'no client credentials user enabled');
    return this.success(this.clientCredentialsUserId, baseUrl);
  }

  private jwtGrant(form: URLSearchParams, baseUrl: string): TokenResponse {
    const parts = (form.get('assertion') ?? '').split('.');
    if (parts.length !== 3) return oauthError('invalid_grant', 'invalid assertion');
    const [h, p, s] = parts as [string, string, string];
    let header: { alg?: unknown };
    let claims: { iss?: unknown; sub?: unknown; aud?: unknown; exp?: unknown };
    try {
      header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
      claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
    } catch {
      return oauthError('invalid_grant', 'invalid assertion');
    }
    if (header.alg !== 'RS256') return oauthError('invalid_grant', 'invalid assertion');
    const signed = verify(
      'sha256',
      Buffer.from(`${h}.${p}`),
      this.app.jwtPublicKey,
      Buffer.from(s, 'base64url'),
    );
    if (!signed) return oauthError('invalid_grant', 'invalid assertion');
    if (claims.iss !== this.app.clientId) return oauthError('invalid_client_id', 'client identifier invalid');
    const audiences = [baseUrl, 'https://login.salesforce.com', 'https://test.salesforce.com'];
    const aud = typeof claims.aud === 'string' ? claims.aud.replace(/\/$/, '') : '';
    if (!audiences.includes(aud)) return oauthError('invalid_grant', 'audience is invalid');
    const nowS = this.clock.now() / 1000;
    if (typeof claims.exp !== 'number' || claims.exp <= nowS)
      return oauthError('invalid_grant', 'expired assertion');
    if (claims.exp > nowS + MAX_ASSERTION_LIFETIME_S) return oauthError('invalid_grant', 'invalid assertion');
    const userId = typeof claims.sub === 'string' ? this.userByName(claims.sub) : undefined;
    if (!userId) return oauthError('invalid_grant', 'user hasn\u2019t approved this consumer');
    return this.success(userId, baseUrl);
  }

  private success(userId: string, baseUrl: string): TokenResponse {
    const id = `${baseUrl}/id/${this.orgId}/${userId}`;
    const issuedAt = String(this.clock.now());
    // Salesforce signs id + issued_at with the consumer secret (HMAC-SHA256, base64).
    const signature = createHmac('sha256', this.app.clientSecret)
      .update(id + issuedAt)
      .digest('base64');
    return {
      status: 200,
      body: {
        access_token: this.issue(userId),
        signature,
        scope: 'api',
        instance_url: baseUrl,
        id,
        token_type: 'Bearer',
        issued_at: issuedAt,
      },
    };
  }
}

function oauthError(error: string, description: string): TokenResponse {
  return { status: 400, body: { error, error_description: description } };
}
