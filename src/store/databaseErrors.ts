import { SetupError } from '../config/setupError.js';

/**
 * Plain sentences for a PostgreSQL connection that fails at open, each naming the fix. The pg
 * driver's own error is read here (Prisma's wrapper keeps only its text); SQLSTATE codes from
 * https://www.postgresql.org/docs/current/errcodes-appendix.html.
 */
export function explainConnectFailure(err: unknown, url: string): SetupError {
  const e = err as { code?: string; message?: string };
  const parsed = safeUrl(url);
  const server = parsed ? `${parsed.hostname}:${parsed.port || '5432'}` : 'the DATABASE_URL server';
  const database = parsed ? decodeURIComponent(parsed.pathname.replace(/^\//, '')) || 'postgres' : '?';
  const role = parsed ? decodeURIComponent(parsed.username) || 'the default role' : '?';
  const reach = 'Check that it is running and that DATABASE_URL names the right host and port.';
  const [problem, fix] = ((): [string, string] => {
    switch (e.code) {
      case '3D000':
        return [
          `The PostgreSQL database "${database}" does not exist on ${server}.`,
          `Create it (createdb ${database}) or fix the database name in DATABASE_URL.`,
        ];
      case '28000':
      case '28P01':
        return [
          `PostgreSQL on ${server} refused the role "${role}" (${firstLine(e.message)}).`,
          'Create the role or fix the user name and password in DATABASE_URL.',
        ];
      case 'ECONNREFUSED':
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
      case 'EHOSTUNREACH':
      case 'ETIMEDOUT':
        return [`Cannot reach the PostgreSQL server at ${server} (${e.code}).`, reach];
      default:
        if (/timeout/i.test(e.message ?? '')) {
          return [`The PostgreSQL server at ${server} did not answer in time.`, reach];
        }
        return [
          `Cannot open the PostgreSQL database at ${server}/${database} (${firstLine(e.message)}).`,
          'Check DATABASE_URL.',
        ];
    }
  })();
  return new SetupError(problem, fix, { cause: err });
}

function safeUrl(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

function firstLine(text: string | undefined): string {
  return (text ?? 'unknown error').split('\n')[0]!.trim();
}
