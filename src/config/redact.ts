import type { AppConfig } from './config.js';

export const REDACTED = '[redacted]';

/** A copy of the config safe to print: every secret replaced, presence still visible. */
export function redactConfig(config: AppConfig): AppConfig {
  const hide = (v: string | undefined) => (v ? REDACTED : v);
  return {
    ...config,
    databaseUrl: config.databaseUrl?.replace(/\/\/([^:@/]+):[^@/]*@/, `//$1:${REDACTED}@`),
    http: { ...config.http, adminToken: hide(config.http.adminToken) },
    credentialsKey: hide(config.credentialsKey),
    service: {
      ...config.service,
      apiKey: hide(config.service.apiKey) ?? '',
      webhookSecrets: config.service.webhookSecrets.map(() => REDACTED),
    },
    hubspot: {
      ...config.hubspot,
      accessToken: hide(config.hubspot.accessToken),
      clientSecret: hide(config.hubspot.clientSecret),
      refreshToken: hide(config.hubspot.refreshToken),
    },
    salesforce: {
      ...config.salesforce,
      accessToken: hide(config.salesforce.accessToken),
      clientSecret: hide(config.salesforce.clientSecret),
      refreshToken: hide(config.salesforce.refreshToken),
      jwtPrivateKey: hide(config.salesforce.jwtPrivateKey),
    },
  };
}
