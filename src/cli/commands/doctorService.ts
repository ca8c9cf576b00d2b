import type { AppConfig } from '../../config/config.js';
import type { SetupCheck } from '../../crm/types.js';
import type { Logger } from '../../log/logger.js';
import {
  ServiceDailyCapError,
  ServiceError,
  ServiceForbiddenError,
  ServiceNotFoundError,
  ServiceRateLimitedError,
  ServiceTransientError,
  ServiceUnauthorizedError,
} from '../../service/errors.js';
import type { Clock } from '../../util/clock.js';
import type { openServiceFromConfig } from '../serviceFromConfig.js';

const NAME = 'Service API key';

/**
 * One `GET /v1/calls?limit=1`, tried once (doctor reports what it sees; retrying would only
 * delay the answer), told in plain words. The key itself never appears: the client's errors
 * leave it out and the caller blanks every secret again.
 */
export async function checkServiceKey(
  openService: typeof openServiceFromConfig,
  config: AppConfig,
  deps: { clock?: Clock | undefined; logger?: Logger | undefined },
): Promise<SetupCheck> {
  const where = config.service.baseUrl;
  const service = await openService(config, { clock: deps.clock, logger: deps.logger, maxAttempts: 1 });
  try {
    await service.client.listCallsPage({ limit: 1 }, { priority: 'writeback' });
    return { name: NAME, ok: true, detail: `accepted by ${where}` };
  } catch (err) {
    return describeFailure(err, where);
  } finally {
    await service.close();
  }
}

/** What a failed `GET /v1/calls` means for the operator. Exported for its unit test. */
export function describeFailure(err: unknown, where: string): SetupCheck {
  const fail = (detail: string, fix?: string): SetupCheck => ({ name: NAME, ok: false, detail, fix });
  if (err instanceof ServiceUnauthorizedError) {
    return fail(
      `invalid key: the Service at ${where} answered 401 Unauthorized`,
      'set SERVICE_API_KEY to a current key (it may have been rotated or revoked)',
    );
  }
  if (err instanceof ServiceForbiddenError) {
    return fail(
      `the key was refused (403 Forbidden): its workspace may not list calls`,
      "use a key whose workspace scope allows reading calls, or ask the Service's admin",
    );
  }
  // Limits are counted per key, so a 429 means the key itself was accepted.
  if (err instanceof ServiceRateLimitedError) {
    return {
      name: NAME,
      ok: true,
      detail: `accepted by ${where} (rate-limited right now: is a worker busy?)`,
    };
  }
  if (err instanceof ServiceDailyCapError) {
    return fail(
      `valid, but the daily request cap is spent until ${new Date(err.resetsAt).toISOString()}`,
      'wait for the reset, or raise SERVICE_PLAN / SERVICE_DAILY_CAP if the plan allows more',
    );
  }
  if (err instanceof ServiceTransientError) {
    const fix = 'check SERVICE_API_BASE_URL and that the Service is reachable from here';
    if (err.kind === 'refused')
      return fail(`unreachable: nothing answered at ${where} (${causeCode(err)})`, fix);
    if (err.kind === 'timeout') return fail(`unreachable: ${where} did not answer in time`, fix);
    if (err.kind === 'connection' || err.kind === 'unsent')
      return fail(`unreachable: ${where} dropped the connection`, fix);
    return fail(
      `the Service at ${where} answered ${err.status ?? 'an error'}: it may be down, try again later`,
    );
  }
  if (err instanceof ServiceNotFoundError) {
    return fail(
      `${where} has no /v1/calls (404)`,
      'SERVICE_API_BASE_URL must be the API base URL, without /v1',
    );
  }
  if (err instanceof ServiceError) return fail(`unexpected answer: ${err.message}`);
  return fail(`could not check: ${err instanceof Error ? err.message : String(err)}`);
}

function causeCode(err: ServiceTransientError): string {
  const code = (err.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : 'no connection';
}
