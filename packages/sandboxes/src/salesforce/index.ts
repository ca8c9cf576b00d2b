import type { AddressInfo } from 'node:net';
import { systemClock, type Clock } from '../clock.js';
import type { CrmFaultRates } from '../crmFaults.js';
import { createSandboxServer } from './server.js';
import { SalesforceSandboxState } from './state.js';
import type { VersionRange } from './versions.js';

export { SalesforceSandboxState, type FaultSpec } from './state.js';
import type { FieldSet } from './schema.js';
export { INTEGRATION_USERNAME } from './seed.js';

export interface SalesforceSandboxOptions {
  /** Port to listen on (default 0: any free port). */
  port?: number;
  /** Address to bind (default 127.0.0.1). */
  host?: string;
  /** Time source for token expiry and record timestamps (default: the system clock). */
  clock?: Clock;
  /** Include the crm-sync custom fields on Task and EmailMessage (default true). */
  withCustomFields?: boolean;
  /** `previous`: the custom fields of the previous crm-sync release only (an org after an upgrade). */
  fieldSet?: FieldSet;
  /** Access-token lifetime in ms (default 2 h). */
  tokenTtlMs?: number;
  /** The org's daily API allowance (default 15,000) and what is used already (default 0). */
  apiLimit?: number;
  apiUsed?: number;
  /** Records per query page (default 2,000 as Salesforce). */
  queryBatchSize?: number;
  /** The API versions the org offers (default 31.0 to 68.0). */
  apiVersions?: VersionRange;
  /** Refresh token rotation: each refresh retires the presented token and returns a new one (default off). */
  rotateRefreshTokens?: boolean;
  /** The app's client credentials flow, run as the integration user (default on). */
  clientCredentials?: boolean;
  /** App (External Client App or connected app) credentials the token endpoint accepts. */
  clientId?: string;
  clientSecret?: string;
  /**
   * The JWT bearer flow's key pair (PEM). Without it a 2048-bit pair is generated, which takes a
   * moment: tests that start many sandboxes share one pair.
   */
  jwtKeys?: { publicKeyPem: string; privateKeyPem?: string | undefined };
  /** Random REQUEST_LIMIT_EXCEEDED (concurrent-request limit) and 5xx at these rates (default none). */
  faultRates?: Partial<CrmFaultRates>;
  /** Seed of the random fault draws (default 42). */
  faultSeed?: number;
}

export interface SalesforceSandbox {
  /** Base URL; also the instance URL and the OAuth login URL. */
  url: string;
  port: number;
  /** A valid access token for the integration user. */
  accessToken: string;
  oauth: {
    clientId: string;
    clientSecret: string;
    refreshToken: string;
    /** Private key matching the sandbox's JWT certificate (absent when only a public key was given). */
    jwtPrivateKeyPem: string | undefined;
    username: string;
  };
  state: SalesforceSandboxState;
  close(): Promise<void>;
}

/** Starts a local stand-in for the Salesforce REST API, seeded with the lookup's test cases. */
export async function startSalesforceSandbox(
  opts: SalesforceSandboxOptions = {},
): Promise<SalesforceSandbox> {
  const clock = opts.clock ?? systemClock;
  const clientId = opts.clientId ?? 'crm-sync-sandbox-client';
  const clientSecret = opts.clientSecret ?? 'crm-sync-sandbox-secret';
  const state = new SalesforceSandboxState({
    clock,
    withCustomFields: opts.withCustomFields ?? true,
    fieldSet: opts.fieldSet,
    tokenTtlMs: opts.tokenTtlMs ?? 2 * 60 * 60 * 1000,
    apiLimit: opts.apiLimit ?? 15_000,
    apiUsed: opts.apiUsed ?? 0,
    queryBatchSize: opts.queryBatchSize ?? 2000,
    clientId,
    clientSecret,
    jwtPublicKeyPem: opts.jwtKeys?.publicKeyPem,
    clientCredentials: opts.clientCredentials,
    apiVersions: opts.apiVersions,
    faultRates: opts.faultRates,
    faultSeed: opts.faultSeed,
  });
  let url = '';
  const server = createSandboxServer(state, clock, () => url);
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const publicHost =
    host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  url = `http://${publicHost}:${port}`;
  state.issuer.rotateRefreshTokens = opts.rotateRefreshTokens ?? false;
  return {
    url,
    port,
    accessToken: state.issuer.issue(state.integrationUserId),
    oauth: {
      clientId,
      clientSecret,
      refreshToken: state.refreshToken,
      jwtPrivateKeyPem: opts.jwtKeys ? opts.jwtKeys.privateKeyPem : state.jwtPrivateKeyPem,
      username: state.username,
    },
    state,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
