import { generateKeyPairSync, createPublicKey, type KeyObject } from 'node:crypto';
import type { Clock } from '../clock.js';
import { CrmFaultInjector, NO_CRM_FAULTS, type CrmFaultRates } from '../crmFaults.js';
import { seededRandom } from '../service/rng.js';
import { TokenIssuer } from './auth.js';
import { idFactory, makeId } from './ids.js';
import { buildSchema, type FieldSet } from './schema.js';
import { INTEGRATION_USERNAME, seedOrg } from './seed.js';
import { OrgStore } from './store.js';
import { OfferedVersions, type VersionRange } from './versions.js';

/** Makes the next matching requests fail: `status` + `[{errorCode, message}]`. */
export interface FaultSpec {
  /** How many requests to fail (default 1). */
  count?: number;
  /** `request_limit` answers 403 REQUEST_LIMIT_EXCEEDED like a spent org allowance. */
  kind?: 'error' | 'request_limit';
  status?: number;
  errorCode?: string;
  message?: string;
  /** Only requests with this method (e.g. PATCH). */
  method?: string;
  /** Only requests whose path contains this text (e.g. `/composite/`). */
  pathContains?: string;
  /** Carry the request out, then answer the error (a write that happened, its answer lost). */
  acted?: boolean;
}

interface Fault {
  remaining: number;
  status: number;
  errorCode: string;
  message: string;
  method?: string | undefined;
  pathContains?: string | undefined;
  acted: boolean;
}

export interface SandboxStateOptions {
  clock: Clock;
  /** Leave out the crm-sync custom fields, to exercise `doctor` (default: included). */
  withCustomFields: boolean;
  /** The custom fields of this crm-sync release, or of the previous one (schema.ts; default current). */
  fieldSet?: FieldSet | undefined;
  /** Access-token lifetime (default 2 h). */
  tokenTtlMs: number;
  /** The org's daily API allowance and what is already used of it. */
  apiLimit: number;
  apiUsed: number;
  /** Records per query page before `nextRecordsUrl` (Salesforce: 2,000 by default; REST API Developer Guide, "Query Options Header"). */
  queryBatchSize: number;
  clientId: string;
  clientSecret: string;
  /** The API versions the org offers (default 31.0 to 68.0, Winter '27). */
  apiVersions?: VersionRange | undefined;
  /** Whether the app has the client credentials flow on, run as the integration user (default on). */
  clientCredentials?: boolean | undefined;
  /** Public key for JWT assertions; a fresh key pair is made when absent. */
  jwtPublicKeyPem?: string | undefined;
  /** Random REQUEST_LIMIT_EXCEEDED and 5xx at these rates (default none), seeded by `faultSeed`. */
  faultRates?: Partial<CrmFaultRates> | undefined;
  faultSeed?: number | undefined;
}

export const SANDBOX_ORG_ID = makeId('00D', 4242);

/** Everything the sandbox holds; tests reach it directly or through the `/_admin` API. */
export class SalesforceSandboxState {
  store!: OrgStore;
  integrationUserId!: string;
  readonly issuer: TokenIssuer;
  readonly jwtPrivateKeyPem: string | undefined;
  readonly refreshToken: string;
  apiUsed: number;
  apiLimit: number;
  queryBatchSize: number;
  readonly locators = new Map<string, Record<string, unknown>[]>();
  readonly randomFaults: CrmFaultInjector;
  readonly versions: OfferedVersions;
  private faults: Fault[] = [];
  private locatorCount = 0;
  private counts = new Map<string, number>();
  private log: { method: string; path: string; status: number }[] = [];

  constructor(private readonly opts: SandboxStateOptions) {
    this.apiUsed = opts.apiUsed;
    this.apiLimit = opts.apiLimit;
    this.queryBatchSize = opts.queryBatchSize;
    this.versions = new OfferedVersions(opts.apiVersions ?? { oldest: 31, newest: 68 });
    this.randomFaults = new CrmFaultInjector(
      { ...NO_CRM_FAULTS, ...opts.faultRates },
      seededRandom(opts.faultSeed ?? 42),
    );
    this.seed();
    let publicKey: KeyObject;
    if (opts.jwtPublicKeyPem) {
      publicKey = createPublicKey(opts.jwtPublicKeyPem);
    } else {
      const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
      publicKey = pair.publicKey;
      this.jwtPrivateKeyPem = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    }
    this.issuer = new TokenIssuer(
      opts.clock,
      opts.tokenTtlMs,
      SANDBOX_ORG_ID,
      { clientId: opts.clientId, clientSecret: opts.clientSecret, jwtPublicKey: publicKey },
      (username) =>
        this.store.all('User').find((u) => String(u.Username).toLowerCase() === username.toLowerCase())?.Id,
      opts.clientCredentials === false ? undefined : this.integrationUserId,
    );
    this.refreshToken = this.issuer.issueRefreshToken(this.integrationUserId);
  }

  private seed(): void {
    this.store = new OrgStore(
      buildSchema(this.opts.withCustomFields, this.opts.fieldSet),
      this.opts.clock,
      idFactory(),
    );
    this.integrationUserId = seedOrg(this.store).integrationUserId;
  }

  get username(): string {
    return INTEGRATION_USERNAME;
  }

  /** Back to the seeded records, no faults, no counted requests, usage as configured. Tokens stay. */
  reset(): void {
    this.seed();
    this.faults = [];
    this.counts.clear();
    this.log = [];
    this.locators.clear();
    this.apiUsed = this.opts.apiUsed;
    this.apiLimit = this.opts.apiLimit;
  }

  injectFault(spec: FaultSpec): void {
    const limit = spec.kind === 'request_limit';
    this.faults.push({
      remaining: spec.count ?? 1,
      status: spec.status ?? (limit ? 403 : 503),
      errorCode: spec.errorCode ?? (limit ? 'REQUEST_LIMIT_EXCEEDED' : 'SERVER_UNAVAILABLE'),
      message:
        spec.message ?? (limit ? 'TotalRequests Limit exceeded.' : 'Server is temporarily unavailable'),
      method: spec.method?.toUpperCase(),
      pathContains: spec.pathContains,
      acted: spec.acted === true,
    });
  }

  /** The fault that applies to this request, if any (consuming one of its count). */
  takeFault(method: string, path: string): Fault | undefined {
    const fault = this.faults.find(
      (f) =>
        f.remaining > 0 &&
        (!f.method || f.method === method) &&
        (!f.pathContains || path.includes(f.pathContains)),
    );
    if (fault) fault.remaining--;
    this.faults = this.faults.filter((f) => f.remaining > 0);
    return fault;
  }

  setApiUsage(used: number, limit = this.apiLimit): void {
    this.apiUsed = used;
    this.apiLimit = limit;
  }

  expireTokens(): void {
    this.issuer.expireAll();
  }

  recordRequest(method: string, path: string, status: number): void {
    const key = `${method} ${path}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    this.log.push({ method, path, status });
    if (this.log.length > 5000) this.log.shift();
  }

  /** Requests seen, by `METHOD path` (query strings left out). */
  requestCounts(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }

  /** How many requests match; e.g. `count({ method: 'PATCH', pathContains: '/composite/sobjects/' })`. */
  count(filter: { method?: string; pathContains?: string } = {}): number {
    let n = 0;
    for (const [key, c] of this.counts) {
      const [method, path] = key.split(' ') as [string, string];
      if (filter.method && filter.method.toUpperCase() !== method) continue;
      if (filter.pathContains && !path.includes(filter.pathContains)) continue;
      n += c;
    }
    return n;
  }

  recentRequests(): { method: string; path: string; status: number }[] {
    return [...this.log];
  }

  newLocator(): string {
    return makeId('01g', ++this.locatorCount);
  }
}
