import type { Record as SfRecord } from 'jsforce';
import type { SalesforceContext } from './context.js';

/**
 * Batched SOQL for `lookupMany`: one query asks for many values (`Email IN (…)`, OR-ed `LIKE`s,
 * `AccountId IN (…)`), and each value gets the first rows a query for it alone would have given.
 * That holds because the batch query has the single query's ORDER BY and rows of one value keep
 * their relative order among the others.
 */

/**
 * Longest query, as URL-encoded text. jsforce sends SOQL in the query string, and one REST call's
 * URI and headers may hold 16,384 bytes together; half of it leaves room for path and headers.
 */
export const MAX_QUERY_CHARS = 8000;
/** Most values in one query, whatever their length (far under SOQL's 100,000-character limit). */
export const MAX_QUERY_TERMS = 200;
/** Rows read per query before deciding whether a value needs asking again (one REST page). */
const MIN_FETCH = 2000;

export interface BatchTerm {
  /** The value's lookup key, handed back to `matches`. */
  key: string;
  /** Its escaped SOQL text: a literal for `IN`, a whole condition for an OR chain. */
  term: string;
}

export interface BatchQuery {
  label: string;
  /** The whole query for some terms, joined with `joiner`. */
  soql: (terms: string) => string;
  joiner: ', ' | ' OR ';
  /** Whether a returned row belongs to a key, exactly as the query's condition decides. */
  matches: (row: SfRecord, key: string) => boolean;
  /** How many leading rows each key needs (1 for "the most recent", 20 for domain candidates…). */
  need: number;
}

const encoded = (s: string) => encodeURIComponent(s).length;

/** Terms in chunks whose whole query stays within `maxChars` encoded and `maxTerms` terms. */
export function packTerms(
  terms: BatchTerm[],
  query: Pick<BatchQuery, 'soql' | 'joiner'>,
  maxChars = MAX_QUERY_CHARS,
  maxTerms = MAX_QUERY_TERMS,
): BatchTerm[][] {
  const fixed = encoded(query.soql(''));
  const join = encoded(query.joiner);
  const chunks: BatchTerm[][] = [];
  let current: BatchTerm[] = [];
  let size = fixed;
  for (const t of terms) {
    const add = encoded(t.term) + (current.length > 0 ? join : 0);
    if (current.length > 0 && (size + add > maxChars || current.length >= maxTerms)) {
      chunks.push(current);
      current = [];
      size = fixed;
    }
    size += encoded(t.term) + (current.length > 0 ? join : 0);
    current.push(t);
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/**
 * The first `need` rows of each key. A query reads at most max(2,000, need × keys) rows; when it
 * was cut short, a key with fewer than `need` rows among them is asked again in a later query
 * (the rows read so far always complete at least one key, so this ends).
 */
export async function firstRowsPer(
  ctx: SalesforceContext,
  query: BatchQuery,
  terms: BatchTerm[],
  limits: { maxChars?: number; maxTerms?: number; minFetch?: number } = {},
): Promise<Map<string, SfRecord[]>> {
  const out = new Map<string, SfRecord[]>();
  let pending = [...new Map(terms.map((t) => [t.key, t])).values()];
  while (pending.length > 0) {
    const again: BatchTerm[] = [];
    for (const chunk of packTerms(pending, query, limits.maxChars, limits.maxTerms)) {
      const soql = query.soql(chunk.map((t) => t.term).join(query.joiner));
      const maxFetch = Math.max(limits.minFetch ?? MIN_FETCH, query.need * chunk.length);
      const result = await ctx.call(
        query.label,
        async () => await ctx.conn.query<SfRecord>(soql, { autoFetch: true, maxFetch }),
      );
      const complete = result.records.length >= result.totalSize;
      const left = chunk.filter((t) => {
        const rows = result.records.filter((r) => query.matches(r, t.key));
        if (!complete && rows.length < query.need) return true;
        out.set(t.key, rows.slice(0, query.need));
        return false;
      });
      // Rows matching no key would mean `matches` and the query disagree: stop rather than loop.
      if (left.length === chunk.length)
        throw new Error(`${query.label}: rows match none of the values asked`);
      again.push(...left);
    }
    pending = again;
  }
  return out;
}
