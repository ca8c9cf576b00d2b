/**
 * Mail domains anyone can sign up for. A participant at one of these tells nothing about their
 * company, so the lookup never matches an account by such a domain (an account whose Website is
 * gmail.com must not collect every Gmail user). The one list for the Salesforce adapter.
 */
export const FREE_MAIL_DOMAINS: ReadonlySet<string> = new Set([
  '163.com',
  '126.com',
  'aol.com',
  'btinternet.com',
  'comcast.net',
  'fastmail.com',
  'free.fr',
  'gmail.com',
  'gmx.at',
  'gmx.com',
  'gmx.de',
  'gmx.net',
  'googlemail.com',
  'hey.com',
  'hotmail.co.uk',
  'hotmail.com',
  'hotmail.de',
  'hotmail.fr',
  'icloud.com',
  'laposte.net',
  'live.com',
  'mac.com',
  'mail.com',
  'mail.ru',
  'me.com',
  'msn.com',
  'orange.fr',
  'outlook.com',
  'pm.me',
  'proton.me',
  'protonmail.com',
  'qq.com',
  'rocketmail.com',
  't-online.de',
  'tutanota.com',
  'web.de',
  'yahoo.co.uk',
  'yahoo.com',
  'yahoo.de',
  'yahoo.fr',
  'yandex.com',
  'yandex.ru',
  'ymail.com',
  'zoho.com',
]);

export function isFreeMailDomain(domain: string): boolean {
  return FREE_MAIL_DOMAINS.has(domain.trim().toLowerCase());
}
