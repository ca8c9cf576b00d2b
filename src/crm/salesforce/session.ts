import { Connection, OAuth2, type TokenResponse } from 'jsforce';
import type { Transport } from 'jsforce/lib/transport.js';
import type { SalesforceConfig } from '../settings.js';
import type { Logger } from '../../log/logger.js';
import type { Clock } from '../../util/clock.js';
import { CrmAuthError, CrmError } from '../errors.js';
import { toCrmError } from './errors.js';
import { authMode, type AuthMode } from './authMode.js';
import { signJwtAssertion } from './jwt.js';
import { memoryRefreshTokens, type RefreshTokenStore } from '../refreshTokens.js';

export { authMode, type AuthMode };

const JWT_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/**
 * jsforce refreshes on every 401 and replays, with no limit: if Salesforce keeps refusing fresh
 * sessions that would loop forever. After this many sessions issued without one accepted
 * response, the refresh fails and the call ends in CrmAuthError.
 */
const MAX_REFRESHES_WITHOUT_SUCCESS = 2;

export interface SessionOptions {
  config: SalesforceConfig;
  clock: Clock;
  logger: Logger;
  /** Transport for REST calls and for the OAuth token endpoint. */
  restTransport: Transport;
  authTransport: Transport;
  dailyPauseMs: number;
  /**
   * Where the refresh-token flow reads the token to present and keeps one Salesforce rotates
   * (default: this process's memory, starting from the configured token).
   */
  refreshTokens?: RefreshTokenStore | undefined;
}

export interface SalesforceSession {
  conn: Connection;
  mode: AuthMode;
  /** Gets a first access token when the configuration has none (any flow but access token). */
  ensure(): Promise<void>;
  /** A REST response other than 401 arrived: the current session works. */
  markHealthy(): void;
  /** Why the last refresh failed, for mapping jsforce's generic "Unable to refresh session". */
  refreshFailure(): CrmError | undefined;
  /** A standing credential problem that does not fail requests yet (a rotation only this process knows). */
  credentialProblem(): string | undefined;
}

/** Said (logged once, and by doctor) when Salesforce rotates a token no other process can learn. */
export const UNSHARED_ROTATION =
  'Salesforce rotated the refresh token (refresh token rotation is on for the app), and without CREDENTIALS_KEY only this process knows the new one: other replicas, the CLI and the next start will be refused. Set CREDENTIALS_KEY (openssl rand -base64 32) on every crm-sync process, then authorize again and set the new SALESFORCE_REFRESH_TOKEN';

/**
 * A jsforce Connection pinned to the configured API version, authenticated by access token,
 * refresh token (jsforce calls our refresh function on 401 and replays the request once the new
 * token is in), JWT bearer (we sign the assertion; jsforce does not) or client credentials.
 */
export function createSession(opts: SessionOptions): SalesforceSession {
  const { config, clock, logger } = opts;
  const mode = authMode(config);
  const oauth2 = new OAuth2({
    loginUrl: config.loginUrl,
    // The JWT grant needs no client credentials in the form; the assertion names the app.
    ...(mode === 'jwt_bearer' ? {} : { clientId: config.clientId, clientSecret: config.clientSecret }),
  });
  oauth2._transport = opts.authTransport;

  let unsharedRotation = false;
  const refreshTokens =
    opts.refreshTokens ??
    memoryRefreshTokens(config.refreshToken ?? '', () => {
      if (!unsharedRotation) logger.error({ crm: 'salesforce' }, UNSHARED_ROTATION);
      unsharedRotation = true;
    });

  let refreshesInRow = 0;
  let failure: CrmError | undefined;
  let pending: Promise<void> | undefined;

  const mint = (): Promise<TokenResponse> => {
    switch (mode) {
      case 'jwt_bearer':
        return oauth2.requestToken({
          grant_type: JWT_GRANT,
          assertion: signJwtAssertion(
            {
              clientId: config.clientId!,
              username: config.username!,
              audience: config.loginUrl,
              nowMs: clock.now(),
            },
            config.jwtPrivateKey!,
          ),
        });
      // No refresh token exists in this flow: a new token is simply requested again, on expiry
      // (401) as at start (Salesforce Help "OAuth 2.0 Client Credentials Flow for
      // Server-to-Server Integration"). jsforce adds client_id and client_secret to the form.
      case 'client_credentials':
        return oauth2.requestToken({ grant_type: 'client_credentials' });
      // With refresh token rotation on, Salesforce retires the presented token and answers with a
      // new `refresh_token` (Salesforce Help, "Refresh Token Rotation" for External Client Apps):
      // the store hands out the newest token and keeps the next one for every process.
      default:
        return refreshTokens.refreshWith(async (token) => {
          const res = await oauth2.refreshToken(token);
          return { result: res, refreshToken: res.refresh_token };
        });
    }
  };

  const refresh = async (): Promise<TokenResponse> => {
    if (refreshesInRow >= MAX_REFRESHES_WITHOUT_SUCCESS) {
      failure = new CrmAuthError(
        'Salesforce refused freshly issued sessions; check the integration user',
        'salesforce',
        401,
      );
      throw failure;
    }
    try {
      const res = await mint();
      // Only sessions actually issued count: a refused grant ends the call anyway, and counting
      // it would refuse every later refresh, even once the grant is restored.
      refreshesInRow++;
      // Salesforce may move the org: later requests go to the instance the token names.
      if (res.instance_url) conn.instanceUrl = res.instance_url;
      failure = undefined;
      logger.info({ crm: 'salesforce', mode }, 'salesforce session refreshed');
      return res;
    } catch (err) {
      const mapped = toCrmError(err, { dailyPauseMs: opts.dailyPauseMs });
      failure =
        mapped instanceof CrmError
          ? mapped
          : new CrmAuthError('Salesforce session refresh failed', 'salesforce');
      throw failure;
    }
  };

  const conn = new Connection({
    version: config.apiVersion,
    loginUrl: config.loginUrl,
    instanceUrl: config.instanceUrl,
    accessToken: config.accessToken,
    oauth2,
    ...(mode === 'access_token'
      ? {}
      : {
          refreshFn: (_c, callback) => {
            refresh().then(
              (res) => callback(null, res.access_token, res),
              (err: Error) => callback(err),
            );
          },
        }),
  });
  conn._transport = opts.restTransport;

  return {
    conn,
    mode,
    ensure: async () => {
      if (conn.accessToken) return;
      pending ??= refresh()
        .then((res) => {
          conn.accessToken = res.access_token;
        })
        .finally(() => {
          pending = undefined;
        });
      await pending;
    },
    markHealthy: () => {
      refreshesInRow = 0;
    },
    refreshFailure: () => failure,
    credentialProblem: () => (unsharedRotation ? UNSHARED_ROTATION : undefined),
  };
}
