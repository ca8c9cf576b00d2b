import type { AppConfig } from '../config/config.js';
import { selectAuthMode } from '../crm/salesforce/authMode.js';
import type { RefreshOutcome, RefreshTokenStore } from '../crm/refreshTokens.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { fingerprint, open, parseCredentialsKey, seal } from '../util/secretBox.js';

/**
 * Longest a refresh may hold the row lock: the token request's own timeout (30 s) and some room.
 * Others wait for the lock as long, then fail like a refused refresh (the job retries later).
 */
const LOCK_HOLD_MS = 45_000;

/**
 * Refresh tokens shared through table crm_credential: each refresh reads the newest token and
 * stores the one the CRM hands back, inside one transaction holding the row lock (SELECT ... FOR
 * UPDATE), so two processes refreshing at once take turns and the second presents the token the
 * first stored. The token is sealed with the admin's CREDENTIALS_KEY; a stored token descending
 * from another configured token (the admin authorised again) is ignored in favour of the new one.
 */
export function dbRefreshTokens(
  prisma: PrismaClient,
  opts: { crm: string; key: Buffer; configured: string },
): RefreshTokenStore {
  const { crm, key, configured } = opts;
  const origin = fingerprint(key, configured);
  return {
    shared: true,
    refreshWith: <T>(refresh: (token: string) => Promise<RefreshOutcome<T>>) =>
      prisma.$transaction(
        async (tx) => {
          await tx.$executeRaw`INSERT INTO crm_credential (crm) VALUES (${crm}) ON CONFLICT (crm) DO NOTHING`;
          const rows = await tx.$queryRaw<{ refresh_token: string | null; origin: string | null }[]>`
            SELECT refresh_token, origin FROM crm_credential WHERE crm = ${crm} FOR UPDATE`;
          const row = rows[0];
          const token =
            row?.refresh_token && row.origin === origin ? open(key, row.refresh_token, crm) : configured;
          const outcome = await refresh(token);
          if (outcome.refreshToken && outcome.refreshToken !== token) {
            await tx.$executeRaw`
              UPDATE crm_credential
                 SET refresh_token = ${seal(key, outcome.refreshToken, crm)}, origin = ${origin},
                     version = version + 1, updated_at = clock_timestamp()
               WHERE crm = ${crm}`;
          }
          return outcome.result;
        },
        { maxWait: LOCK_HOLD_MS, timeout: LOCK_HOLD_MS },
      ),
  };
}

/**
 * The shared store for the configured CRM when it refreshes with a refresh token (Salesforce's
 * refresh-token flow, HubSpot OAuth) and the admin set CREDENTIALS_KEY; otherwise undefined (the
 * adapter keeps the token in memory; Salesforce reports a rotation it cannot share).
 */
export function refreshTokensFor(
  config: Pick<AppConfig, 'crm' | 'salesforce' | 'hubspot' | 'credentialsKey'>,
  prisma: PrismaClient,
): RefreshTokenStore | undefined;
/** Whether the configuration needs the shared store (without a database at hand). */
export function refreshTokensFor(
  config: Pick<AppConfig, 'crm' | 'salesforce' | 'hubspot' | 'credentialsKey'>,
  prisma: null,
): true | undefined;
export function refreshTokensFor(
  config: Pick<AppConfig, 'crm' | 'salesforce' | 'hubspot' | 'credentialsKey'>,
  prisma: PrismaClient | null,
): RefreshTokenStore | true | undefined {
  const key = config.credentialsKey ? parseCredentialsKey(config.credentialsKey) : undefined;
  const configured = configuredRefreshToken(config);
  if (!key || !configured) return undefined;
  if (!prisma) return true;
  return dbRefreshTokens(prisma, { crm: config.crm, key, configured });
}

/** The refresh token the configured CRM's flow presents, when it refreshes with one. */
function configuredRefreshToken(
  config: Pick<AppConfig, 'crm' | 'salesforce' | 'hubspot'>,
): string | undefined {
  if (config.crm === 'hubspot') {
    const h = config.hubspot;
    return h.clientId && h.clientSecret ? h.refreshToken : undefined;
  }
  return selectAuthMode(config.salesforce) === 'refresh_token' ? config.salesforce.refreshToken : undefined;
}
