import type { Connection, Record as SfRecord } from 'jsforce';
import type { Logger } from '../../log/logger.js';
import type { DescribeCache } from './describe.js';

/** What the lookup, write and setup modules share: the connection and the guarded call. */
export interface SalesforceContext {
  conn: Connection;
  /**
   * Runs one SDK operation: checks the API budget first, makes sure there is a session, and maps
   * any failure to a CrmError class.
   */
  call<T>(label: string, fn: () => Promise<T>): Promise<T>;
  describe: DescribeCache;
  logger: Logger;
  /** A credential problem that does not fail requests yet, for doctor. */
  credentialProblem?: (() => string | undefined) | undefined;
}

/** Runs a SOQL query, following `nextRecordsUrl` pages up to `maxFetch` rows. */
export async function queryRecords<T extends SfRecord>(
  ctx: SalesforceContext,
  label: string,
  soql: string,
  maxFetch = 2000,
): Promise<T[]> {
  const result = await ctx.call(
    label,
    async () => await ctx.conn.query<T>(soql, { autoFetch: true, maxFetch }),
  );
  return result.records;
}
