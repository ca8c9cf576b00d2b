/**
 * One attempt at a call recording: the Service answers with the audio, or with a redirect to a
 * signed URL, which is fetched WITHOUT our Authorization header (it must not leak to storage).
 * The body is handed back as a stream, never buffered.
 */
import type { Priority, RequestBudget } from '../budget/types.js';
import { isServiceApiUrl, RECORDING_REDIRECT_STATUSES } from './contract.js';
import { ServiceResponseError, ServiceTransientError, type ServiceError } from './errors.js';
import type { IncomingResponse, OutgoingRequest, Transport } from './transport.js';
import type { Recording } from './types.js';

export interface RecordingAttempt {
  transport: Transport;
  budget: RequestBudget;
  priority: Priority;
  signal: AbortSignal | undefined;
  label: string;
  path: string;
  url: URL;
  serviceBase: URL;
  serviceHeaders: Record<string, string>;
  userAgent: string;
  /** Maps a non-2xx Service answer to its error class. */
  failure: (res: IncomingResponse, bodyText: string) => ServiceError;
}

type First = { kind: 'audio'; res: IncomingResponse } | { kind: 'redirect'; location: URL };

export async function fetchRecording(a: RecordingAttempt): Promise<Recording> {
  const context = { method: 'GET', path: a.path };
  const first = await a.budget.run(
    a.priority,
    async (): Promise<First> => {
      const req: OutgoingRequest = {
        method: 'GET',
        url: a.url,
        headers: a.serviceHeaders,
        signal: a.signal,
        context,
      };
      const res = await a.transport.send(req);
      if (res.status >= 200 && res.status <= 299) return { kind: 'audio', res };
      if (RECORDING_REDIRECT_STATUSES.includes(res.status)) {
        await discard(res);
        return { kind: 'redirect', location: redirectTarget(res, a.url, { ...context, status: res.status }) };
      }
      throw a.failure(res, await a.transport.readText(res, req));
    },
    { signal: a.signal, label: a.label },
  );
  if (first.kind === 'audio') return toRecording(first.res);

  const target = first.location;
  // Never the signed URL itself in a message: its query string is a credential.
  const where = `${a.path}: the signed recording URL on ${target.host}`;
  const req: OutgoingRequest = {
    method: 'GET',
    url: target,
    headers: { 'user-agent': a.userAgent, accept: 'audio/*, */*;q=0.8' },
    signal: a.signal,
    context,
  };
  const download = async () => {
    const res = await a.transport.send(req);
    if (res.status >= 200 && res.status <= 299) return res;
    await discard(res);
    if (RECORDING_REDIRECT_STATUSES.includes(res.status)) {
      throw new ServiceResponseError(
        `GET ${where} redirected again`,
        { ...context, status: res.status },
        'Location',
      );
    }
    // Signed URLs expire: a new attempt asks the Service for a fresh one.
    throw new ServiceTransientError(
      `GET ${where} answered ${res.status}`,
      { ...context, status: res.status },
      'status',
    );
  };
  const res = isServiceApiUrl(target, a.serviceBase)
    ? await a.budget.run(a.priority, download, { signal: a.signal, label: `${a.label} (signed)` })
    : await download();
  return toRecording(res);
}

function redirectTarget(
  res: IncomingResponse,
  from: URL,
  context: { method: string; path: string; status: number },
) {
  const location = res.headers.location;
  const value = Array.isArray(location) ? location[0] : location;
  let target: URL | undefined;
  try {
    target = value ? new URL(value, from) : undefined;
  } catch {
    target = undefined;
  }
  if (!target || (target.protocol !== 'https:' && target.protocol !== 'http:')) {
    throw new ServiceResponseError(
      `GET ${context.path} answered ${context.status} without a usable Location`,
      context,
      'Location',
    );
  }
  return target;
}

function toRecording(res: IncomingResponse): Recording {
  const type = res.headers['content-type'];
  const length = res.headers['content-length'];
  const contentLength = typeof length === 'string' && /^\d+$/.test(length) ? Number(length) : undefined;
  return {
    contentType: (Array.isArray(type) ? type[0] : type) ?? 'application/octet-stream',
    ...(contentLength === undefined ? {} : { contentLength }),
    body: res.body,
  };
}

async function discard(res: IncomingResponse): Promise<void> {
  try {
    await res.body.dump();
  } catch {
    // The connection is dropped instead of reused; nothing else to do.
  }
}
