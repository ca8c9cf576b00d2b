import type { Clock } from '../../util/clock.js';
import { CrmAuthError, CrmTransientError } from '../errors.js';
import { memoryRefreshTokens, type RefreshTokenStore } from '../refreshTokens.js';
import { isSdkError } from './errorMap.js';

/**
 * The access token HubSpot requests carry: a private-app token as is, or an OAuth access token
 * obtained with the refresh token and renewed shortly before `expires_in` runs out, or at once
 * when HubSpot answers 401. Concurrent callers share one refresh.
 */
export interface HubSpotCredentials {
  accessToken?: string | undefined;
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  refreshToken?: string | undefined;
}

export interface TokenGrant {
  accessToken: string;
  refreshToken?: string | undefined;
  expiresInSec?: number | undefined;
}

/** Calls `POST /oauth/2026-03/token` (refresh_token grant). */
export type RefreshFn = (credentials: {
  clientId: string;
  clientSecret: string;
  refreshToken: string;
}) => Promise<TokenGrant>;

/**
 * Renew this long before the token's stated expiry, or a tenth of its lifetime when that is
 * shorter: a margin longer than the lifetime would ask for a new token before every request.
 */
const EXPIRY_MARGIN_MS = 60_000;

export class TokenSource {
  private token: string | undefined;
  private expiresAt = Infinity;
  private marginMs = EXPIRY_MARGIN_MS;
  private refreshing: Promise<string> | undefined;
  private refreshToken: string | undefined;
  private readonly store: RefreshTokenStore;

  constructor(
    private readonly credentials: HubSpotCredentials,
    private readonly clock: Clock,
    private readonly refreshFn: RefreshFn,
    private readonly onRefresh?: (grant: TokenGrant) => void,
    /**
     * Where the refresh token to present comes from and where one HubSpot hands back goes: shared
     * through the database by every process when CREDENTIALS_KEY is set, else this process alone.
     */
    store?: RefreshTokenStore,
  ) {
    this.token = credentials.accessToken;
    this.refreshToken = credentials.refreshToken;
    this.store = store ?? memoryRefreshTokens(credentials.refreshToken ?? '');
    if (!this.token && !this.canRefresh) {
      throw new CrmAuthError(
        'HubSpot needs an access token or OAuth client id, secret and refresh token',
        'hubspot',
      );
    }
  }

  get canRefresh(): boolean {
    return Boolean(this.credentials.clientId && this.credentials.clientSecret && this.refreshToken);
  }

  /** A token to use now (refreshing first when there is none or it is about to expire). */
  async current(): Promise<string> {
    if (this.token && this.clock.now() < this.expiresAt - this.marginMs) return this.token;
    if (!this.canRefresh && this.token) return this.token;
    return this.refresh(this.token);
  }

  /** Renews the token unless another caller already replaced `stale`. */
  async refresh(stale: string | undefined): Promise<string> {
    if (this.token && this.token !== stale) return this.token;
    if (!this.canRefresh)
      throw new CrmAuthError('HubSpot rejected the access token and OAuth is not configured', 'hubspot');
    this.refreshing ??= this.doRefresh().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async doRefresh(): Promise<string> {
    const started = this.clock.now();
    let grant: TokenGrant;
    try {
      grant = await this.store.refreshWith(async (refreshToken) => {
        const answer = await this.refreshFn({
          clientId: this.credentials.clientId ?? '',
          clientSecret: this.credentials.clientSecret ?? '',
          refreshToken,
        });
        return { result: answer, refreshToken: answer.refreshToken };
      });
    } catch (e) {
      if (isSdkError(e) && e.code >= 400 && e.code < 500) {
        const status = (e.body as { status?: unknown } | undefined)?.status;
        throw new CrmAuthError(
          `HubSpot refused the OAuth refresh (${String(status ?? e.code)})`,
          'hubspot',
          e.code,
        );
      }
      throw new CrmTransientError(
        `HubSpot OAuth refresh failed: ${e instanceof Error ? e.message : String(e)}`,
        'hubspot',
      );
    }
    this.token = grant.accessToken;
    const lifetimeMs = grant.expiresInSec ? grant.expiresInSec * 1000 : Infinity;
    this.expiresAt = started + lifetimeMs;
    this.marginMs = Math.min(EXPIRY_MARGIN_MS, lifetimeMs / 10);
    if (grant.refreshToken) this.refreshToken = grant.refreshToken;
    this.onRefresh?.(grant);
    return grant.accessToken;
  }
}
