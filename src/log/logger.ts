import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/**
 * Paths pino blanks out wherever they appear in a log line. Secrets must also never be spread
 * into a log object in the first place; this is the second line of defence.
 */
export const REDACT_PATHS = [
  'apiKey',
  '*.apiKey',
  'accessToken',
  '*.accessToken',
  'refreshToken',
  '*.refreshToken',
  'clientSecret',
  '*.clientSecret',
  'webhookSecret',
  '*.webhookSecret',
  'webhookSecrets',
  '*.webhookSecrets',
  'jwtPrivateKey',
  '*.jwtPrivateKey',
  'credentialsKey',
  '*.credentialsKey',
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'req.headers.authorization',
  'req.headers["x-service-signature"]',
  'req.headers.cookie',
  'adminToken',
  '*.adminToken',
  'config.http.adminToken',
  'config.service.apiKey',
  'config.service.webhookSecrets',
  'config.hubspot.accessToken',
  'config.hubspot.clientSecret',
  'config.hubspot.refreshToken',
  'config.salesforce.accessToken',
  'config.salesforce.clientSecret',
  'config.salesforce.refreshToken',
  'config.salesforce.jwtPrivateKey',
];

export function createLogger(
  options: { level?: string; name?: string } = {},
  destination?: DestinationStream,
): Logger {
  return pino(
    {
      name: options.name ?? 'crm-sync',
      level: options.level ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}

/** A logger that writes nothing, for tests and library callers that pass none. */
export const silentLogger: Logger = pino({ level: 'silent' });
