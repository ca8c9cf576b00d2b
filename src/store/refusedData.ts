/**
 * Whether the database refused the data itself rather than being unreachable: SQLSTATE class 22
 * (data exception, e.g. text holding NUL) or 23 (integrity constraint). Writing the same data
 * again cannot succeed, so it is neither retried nor allowed to fail the rows around it. Prisma's
 * driver adapters carry the server's code in `meta.driverAdapterError.cause.code`, on PostgreSQL
 * and PGlite alike.
 */
export function refusedData(error: unknown): boolean {
  const code = sqlStateOf(error);
  return code !== undefined && (code.startsWith('22') || code.startsWith('23'));
}

function sqlStateOf(error: unknown): string | undefined {
  const meta = (error as { meta?: { driverAdapterError?: { cause?: { code?: unknown } } } } | null)?.meta;
  const code = meta?.driverAdapterError?.cause?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}
