/**
 * Free-mail domains: an address there says nothing about the person's employer, so a lookup
 * must never match a company or account by such a domain (a CRM company whose domain or Website
 * is gmail.com must not collect every Gmail user). The one list for every CRM adapter;
 * lower-case, exact domains; extend here, nowhere else.
 */
export const FREE_MAIL_DOMAINS: ReadonlySet<string> = new Set([
  '126.com',
  '163.com',
  'aim.com',
  'aol.com',
  'att.net',
  'bigpond.com',
  'btinternet.com',
  'comcast.net',
  'duck.com',
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
  'hotmail.it',
  'icloud.com',
  'inbox.com',
  'laposte.net',
  'libero.it',
  'live.co.uk',
  'live.com',
  'mac.com',
  'mail.com',
  'mail.ru',
  'me.com',
  'msn.com',
  'naver.com',
  'orange.fr',
  'outlook.com',
  'outlook.de',
  'pm.me',
  'proton.me',
  'protonmail.com',
  'qq.com',
  'rediffmail.com',
  'rocketmail.com',
  'sbcglobal.net',
  't-online.de',
  'tutanota.com',
  'verizon.net',
  'web.de',
  'yahoo.co.in',
  'yahoo.co.jp',
  'yahoo.co.uk',
  'yahoo.com',
  'yahoo.de',
  'yahoo.fr',
  'yandex.com',
  'yandex.ru',
  'ymail.com',
  'zoho.com',
]);

/** The lower-cased domain of an email address, or undefined when it is not an address. */
export function emailDomain(email: string): string | undefined {
  const at = email.lastIndexOf('@');
  if (at <= 0 || at === email.length - 1) return undefined;
  return email
    .slice(at + 1)
    .trim()
    .toLowerCase()
    .replace(/\.$/, '');
}

/** Case- and whitespace-insensitive; a trailing root dot (`gmail.com.`) counts as the same domain. */
export function isFreeMailDomain(domain: string): boolean {
  return FREE_MAIL_DOMAINS.has(domain.trim().toLowerCase().replace(/\.$/, ''));
}
