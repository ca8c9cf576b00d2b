import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import { errorBody, type HubSpotErrorBody } from './errors.js';

/**
 * Who may call the sandbox: one private-app token, and OAuth access tokens minted by
 * `POST /oauth/2026-03/token` (refresh_token grant) that expire after `accessTokenTtlMs`
 * (HubSpot: `expires_in` 1800 s; HubSpot OAuth guide, "Refresh an access token"). A rejected
 * token answers 401 with HubSpot's error body (public spec `components.schemas.Error`).
 */
export interface OAuthApp {
  clientId: string;
  clientSecret: string;
  refreshToken: string;
}

export type AuthResult = { ok: true; app: string; oauth: boolean } | { ok: false; body: HubSpotErrorBody };

export class SandboxAuth {
  private issued = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    readonly privateToken: string,
    readonly oauth: OAuthApp,
    private readonly accessTokenTtlMs: number,
  ) {}

  /** Each refresh retires the presented refresh token and answers with a new one (default off). */
  rotateRefreshTokens = false;

  /** While set, every token and the refresh grant are refused, as after an admin revokes the app. */
  private revoked = false;

  check(authorization: string | undefined): AuthResult {
    const token = /^Bearer\s+(.+)$/i.exec(authorization ?? '')?.[1]?.trim();
    if (this.revoked) return { ok: false, body: invalidAuthentication() };
    if (token && token === this.privateToken) return { ok: true, app: `private:${token}`, oauth: false };
    const expiresAt = token ? this.issued.get(token) : undefined;
    if (expiresAt !== undefined) {
      const now = this.clock.now();
      if (now < expiresAt) return { ok: true, app: `oauth:${this.oauth.clientId}`, oauth: true };
      const minutes = Math.floor((now - expiresAt) / 60_000);
      return {
        ok: false,
        body: errorBody(
          'EXPIRED_AUTHENTICATION',
          `The OAuth token used to make this call expired ${minutes} minute(s) ago.`,
        ),
      };
    }
    return { ok: false, body: invalidAuthentication() };
  }

  /** The token endpoint: answers like HubSpot's `/oauth/2026-03/token` (400 with `status` codes). */
  token(form: Record<string, string>): { status: number; body: Record<string, unknown> } {
    if (form.grant_type !== 'refresh_token') {
      return { status: 400, body: { status: 'BAD_GRANT_TYPE', message: 'grant_type must be refresh_token' } };
    }
    if (form.client_id !== this.oauth.clientId) {
      return { status: 400, body: { status: 'BAD_CLIENT_ID', message: 'missing or unknown client id' } };
    }
    if (form.client_secret !== this.oauth.clientSecret) {
      return {
        status: 400,
        body: { status: 'BAD_CLIENT_SECRET', message: 'missing or invalid client secret' },
      };
    }
    if (form.refresh_token !== this.oauth.refreshToken || this.revoked) {
      return {
        status: 400,
        body: { status: 'BAD_REFRESH_TOKEN', message: 'missing or invalid refresh token' },
      };
    }
    // HubSpot hands back the same refresh token; `rotateRefreshTokens` (not HubSpot's documented
    // behaviour) retires it instead, to test that crm-sync shares a token a CRM does rotate.
    if (this.rotateRefreshTokens)
      this.oauth.refreshToken = `sandbox-refresh-${randomBytes(12).toString('hex')}`;
    const accessToken = `oat-sandbox-${randomBytes(12).toString('hex')}`;
    this.issued.set(accessToken, this.clock.now() + this.accessTokenTtlMs);
    return {
      status: 200,
      body: {
        token_type: 'bearer',
        refresh_token: this.oauth.refreshToken,
        access_token: accessToken,
        expires_in: Math.round(this.accessTokenTtlMs / 1000),
      },
    };
  }

  /** Makes every OAuth access token issued so far expired (to test a transparent refresh). */
  expireAll(): number {
    const past = this.clock.now() - 1;
    for (const token of this.issued.keys()) this.issued.set(token, past);
    return this.issued.size;
  }

  /** Refuses every credential until `restore` (a private app's token rotated, an app uninstalled). */
  revoke(): void {
    this.revoked = true;
  }

  restore(): void {
    this.revoked = false;
  }

  reset(): void {
    this.issued.clear();
    this.revoked = false;
  }
}

function invalidAuthentication(): HubSpotErrorBody {
  return errorBody(
    'INVALID_AUTHENTICATION',
    'Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview',
  );
}
