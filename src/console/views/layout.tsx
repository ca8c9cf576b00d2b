import type { ComponentChildren } from 'preact';
import type { StandingWarning } from '../warnings.js';

export type Section = 'overview' | 'failures' | 'calls' | 'mappings' | 'login';

const NAV: { section: Section; href: string; label: string }[] = [
  { section: 'overview', href: '/console', label: 'Overview' },
  { section: 'failures', href: '/console/failures', label: 'Failures' },
  { section: 'calls', href: '/console/calls', label: 'Calls' },
  { section: 'mappings', href: '/console/mappings', label: 'Mappings' },
];

export interface PageProps {
  title: string;
  section: Section;
  crm?: string | undefined;
  warnings?: StandingWarning[] | undefined;
  /** A sign-out button is shown when the admin signed in with the token. */
  signOut?: { csrf: string } | undefined;
  /** The page refreshes its content while open (console.js). */
  refresh?: boolean | undefined;
  notice?: string | undefined;
  children: ComponentChildren;
}

export function Page(props: PageProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · crm-sync`}</title>
        <link rel="stylesheet" href="/console/assets/console.css" />
        <script src="/console/assets/console.js" defer></script>
      </head>
      <body data-refresh={props.refresh ? 'on' : 'off'}>
        <header class="top">
          <span class="brand">
            crm-sync{props.crm ? ` · ${props.crm === 'hubspot' ? 'HubSpot' : 'Salesforce'}` : ''}
          </span>
          {props.section !== 'login' && (
            <nav>
              {NAV.map((n) => (
                <a href={n.href} class={n.section === props.section ? 'current' : undefined}>
                  {n.label}
                </a>
              ))}
            </nav>
          )}
          <span class="spacer"></span>
          {props.refresh && <span class="refreshed" id="refreshed"></span>}
          {props.signOut && (
            <form method="post" action="/console/logout" class="inline">
              <input type="hidden" name="csrf" value={props.signOut.csrf} />
              <button type="submit" class="link">
                Sign out
              </button>
            </form>
          )}
        </header>
        <main id="main">
          {props.notice && (
            <p class="notice" role="status">
              {props.notice}
            </p>
          )}
          {(props.warnings ?? []).length > 0 && (
            <ul class="warnings" aria-label="Warnings">
              {props.warnings!.map((w) => (
                <li data-warning={w.code}>{w.message}</li>
              ))}
            </ul>
          )}
          <h1>{props.title}</h1>
          {props.children}
        </main>
      </body>
    </html>
  );
}

/** A POST form with the CSRF token, for every state-changing action. */
export function ActionForm(props: {
  action: string;
  csrf: string;
  children: ComponentChildren;
  class?: string;
}) {
  return (
    <form method="post" action={props.action} class={props.class}>
      <input type="hidden" name="csrf" value={props.csrf} />
      {props.children}
    </form>
  );
}
