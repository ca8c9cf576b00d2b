import type { HttpRequest, HttpRequestOptions, HttpResponse } from 'jsforce';
import { Transport } from 'jsforce/lib/transport.js';

export interface TransportOptions {
  /** Per-request timeout; jsforce's own default is 30 minutes. */
  timeoutMs: number;
  /** Let jsforce retry GETs on 420/429/5xx (0.5–8 s backoff, 5 times). Off: callers retry. */
  sdkRetries: boolean;
  /** Proxy for a URL, or undefined for a direct connection. */
  proxyFor: (url: string) => string | undefined;
  onRequest?: (req: HttpRequest) => void;
  onResponse?: (res: HttpResponse) => void;
}

/**
 * The transport under jsforce's Connection and OAuth2 client. It sees every HTTP exchange
 * (request counting, Sforce-Limit-Info, session health) and sets what jsforce only reads from
 * process-wide defaults: the proxy (jsforce honours http(s)_proxy with no NO_PROXY), the
 * timeout and the retry policy.
 */
export class ControlledTransport extends Transport {
  constructor(private readonly opts: TransportOptions) {
    super();
  }

  override httpRequest(req: HttpRequest, options: HttpRequestOptions = {}) {
    this.opts.onRequest?.(req);
    const promise = super.httpRequest(req, {
      ...options,
      // An explicit undefined overrides jsforce's env-derived default proxy.
      httpProxy: this.opts.proxyFor(req.url),
      timeout: this.opts.timeoutMs,
      ...(this.opts.sdkRetries ? {} : { retry: { methods: [] } }),
    });
    promise.then(
      (res) => this.opts.onResponse?.(res),
      () => undefined,
    );
    return promise;
  }
}

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/i;

/**
 * The proxy to use: the configured one, else the environment's https_proxy/http_proxy, never
 * for loopback hosts (the local sandboxes), mirroring the usual NO_PROXY default.
 */
export function proxyResolver(
  configured: string | null | undefined,
  env: Record<string, string | undefined>,
): (url: string) => string | undefined {
  const fromEnv = env.https_proxy ?? env.http_proxy ?? env.HTTPS_PROXY ?? env.HTTP_PROXY;
  return (url) => {
    if (configured === null) return undefined;
    if (configured !== undefined) return configured;
    let host = '';
    try {
      host = new URL(url).hostname;
    } catch {
      return undefined;
    }
    return LOOPBACK.test(host) || host === '::1' ? undefined : fromEnv || undefined;
  };
}
