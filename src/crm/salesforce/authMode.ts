export type AuthMode = 'access_token' | 'refresh_token' | 'jwt_bearer' | 'client_credentials';

/**
 * The settings that choose the flow (a part of SalesforceConfig, stated here so that the config
 * checks in src/config can use this module without an import cycle).
 */
type FlowSettings = Partial<
  Record<
    | 'accessToken'
    | 'instanceUrl'
    | 'clientId'
    | 'clientSecret'
    | 'refreshToken'
    | 'username'
    | 'jwtPrivateKey',
    string | undefined
  >
>;

/**
 * Which Salesforce flow the settings ask for, or undefined when they name none completely. Apart
 * from session.ts so that credential advice and config checks (loaded by every worker) do not load
 * jsforce. A client id and secret with neither a refresh token nor JWT settings select the client
 * credentials flow (an External Client App with a Run As user, Salesforce Help "OAuth 2.0 Client
 * Credentials Flow for Server-to-Server Integration").
 */
export function selectAuthMode(config: FlowSettings): AuthMode | undefined {
  if (config.clientId && config.refreshToken) return 'refresh_token';
  if (config.clientId && config.username && config.jwtPrivateKey) return 'jwt_bearer';
  if (config.clientId && config.clientSecret) return 'client_credentials';
  if (config.accessToken && config.instanceUrl) return 'access_token';
  return undefined;
}

export function authMode(config: FlowSettings): AuthMode {
  const mode = selectAuthMode(config);
  if (mode) return mode;
  throw new Error(
    'Salesforce credentials incomplete: set an access token with its instance URL, the client credentials flow, the JWT bearer flow or the refresh-token flow',
  );
}

/** Hosts that serve every org: Salesforce refuses the client credentials grant on them. */
const SHARED_LOGIN_HOSTS = ['login.salesforce.com', 'test.salesforce.com'];

/**
 * Why `loginUrl` cannot serve the client credentials flow, or undefined when it can. Salesforce
 * issues that token only from the org's own My Domain ("request not supported on this domain" on
 * login.salesforce.com; Help "OAuth 2.0 Client Credentials Flow for Server-to-Server Integration").
 */
export function clientCredentialsLoginProblem(loginUrl: string): string | undefined {
  let host: string;
  try {
    host = new URL(loginUrl).hostname.toLowerCase();
  } catch {
    return undefined;
  }
  if (!SHARED_LOGIN_HOSTS.includes(host)) return undefined;
  return `SALESFORCE_LOGIN_URL: the client credentials flow (SALESFORCE_CLIENT_ID + SALESFORCE_CLIENT_SECRET without a refresh token) needs your org's My Domain URL, not ${host}: set it to https://<your-domain>.my.salesforce.com (Setup > My Domain shows it; a sandbox org's is https://<your-domain>--<sandbox>.sandbox.my.salesforce.com)`;
}
