import type { Client } from '@hubspot/api-client';

/**
 * One HubSpot request through the official client's generic `apiRequest` (its auth header, base
 * path and fetch transport), which returns the raw Response and throws on no status. An answer
 * outside `ok` is thrown as `HubSpotHttpError`, with the `code`/`body`/`headers` shape the SDK's
 * own ApiException has, so errorMap reads both alike.
 */
export class HubSpotHttpError extends Error {
  constructor(
    readonly code: number,
    readonly body: unknown,
    readonly headers: Record<string, string>,
  ) {
    super(`HTTP-Code: ${code}`);
    this.name = 'HubSpotHttpError';
  }
}

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  /** Query values; lists go comma-separated, as HubSpot's reference shows `properties=a,b`. */
  qs?: Record<string, string | number | boolean | string[] | undefined>;
  body?: unknown;
  /** A form-encoded body instead of JSON (the token endpoint). */
  form?: Record<string, string>;
  /** Success statuses; anything else throws. */
  ok: number[];
}

export type HubSpotRequest = <T>(spec: RequestSpec) => Promise<T>;

export function hubSpotRequester(
  client: Pick<Client, 'apiRequest'>,
  onResponse: (headers: Record<string, string>) => void,
): HubSpotRequest {
  return async <T>(spec: RequestSpec): Promise<T> => {
    const res = await client.apiRequest({
      method: spec.method,
      path: spec.path,
      ...(spec.qs ? { qs: queryOf(spec.qs) } : {}),
      ...(spec.form
        ? {
            body: new URLSearchParams(spec.form).toString(),
            defaultJson: false,
            headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          }
        : spec.body !== undefined
          ? { body: spec.body }
          : {}),
    });
    const headers: Record<string, string> = {};
    res.headers.forEach((value, name) => {
      headers[name.toLowerCase()] = value;
    });
    onResponse(headers);
    const text = await res.text();
    const body = parse(text);
    if (!spec.ok.includes(res.status)) throw new HubSpotHttpError(res.status, body, headers);
    return body as T;
  };
}

function queryOf(qs: NonNullable<RequestSpec['qs']>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(qs)) {
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(',') : String(v);
  }
  return out;
}

function parse(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
