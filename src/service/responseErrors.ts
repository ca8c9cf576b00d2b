/**
 * Turns a non-2xx Service answer into the error class that says what to do about it.
 * The JSON error body is read when there is one, never required.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { dailyCapResetsAt, isDailyCap, meaningOfStatus, analysis404Hint, readErrorBody } from './contract.js';
import {
  ServiceBadRequestError,
  ServiceDailyCapError,
  ServiceForbiddenError,
  ServiceNotFoundError,
  ServiceNotReadyError,
  ServiceRateLimitedError,
  ServiceResponseError,
  ServiceTransientError,
  ServiceUnauthorizedError,
  type ServiceError,
  type ServiceErrorContext,
} from './errors.js';
import { parseRetryAfter } from './retryAfter.js';

export interface FailedResponse {
  method: string;
  path: string;
  status: number;
  headers: IncomingHttpHeaders;
  bodyText: string;
  onAnalysisPath: boolean;
  nowMs: number;
  /** Blanked out of anything the server wrote, in case it echoes the key back. */
  secrets: readonly string[];
}

export function errorFromResponse(res: FailedResponse): ServiceError {
  const body = readErrorBody(res.bodyText);
  const serviceCode = body.code === undefined ? undefined : scrub(body.code, res.secrets).slice(0, 100);
  const context: ServiceErrorContext = {
    method: res.method,
    path: res.path,
    status: res.status,
    serviceCode,
  };
  const said = body.message ? `: ${scrub(body.message, res.secrets).slice(0, 300)}` : '';
  const head = `${res.method} ${res.path} answered ${res.status}${serviceCode ? ` ${serviceCode}` : ''}`;

  switch (meaningOfStatus(res.status)) {
    case 'bad_request':
      return new ServiceBadRequestError(`${head}${said}`, context);
    case 'unauthorized':
      return new ServiceUnauthorizedError(
        `${head}: the Service API key is invalid or was rotated${said}`,
        context,
      );
    case 'forbidden':
      return new ServiceForbiddenError(`${head}: the key's workspace may not do this${said}`, context);
    case 'not_found':
      // A bare 404 on /analysis stays "not found" here; the client then asks whether the call exists.
      if (res.onAnalysisPath && analysis404Hint(serviceCode) === 'not_ready') {
        return new ServiceNotReadyError(`${head}: the analysis is not ready yet${said}`, context);
      }
      return new ServiceNotFoundError(`${head}: unknown call${said}`, context);
    case 'not_ready':
      return new ServiceNotReadyError(`${head}: not ready yet${said}`, context);
    case 'rate_limited': {
      const retryAfterMs = parseRetryAfter(res.headers['retry-after'], res.nowMs);
      if (isDailyCap(serviceCode, retryAfterMs, res.nowMs)) {
        const resetsAt = dailyCapResetsAt(retryAfterMs, res.nowMs);
        return new ServiceDailyCapError(
          `${head}: the daily request cap is spent until ${new Date(resetsAt).toISOString()}${said}`,
          context,
          resetsAt,
        );
      }
      const after = retryAfterMs === undefined ? 'no usable Retry-After' : `Retry-After ${retryAfterMs} ms`;
      return new ServiceRateLimitedError(`${head}: rate limited, ${after}${said}`, context, retryAfterMs);
    }
    case 'transient':
      return new ServiceTransientError(`${head}${said}`, context, 'status');
    case 'unexpected':
      return new ServiceResponseError(`${head}, which the contract does not expect`, context, '(status)');
  }
}

export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret) out = out.split(secret).join('[redacted]');
  return out;
}
