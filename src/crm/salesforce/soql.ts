import type { DealRule } from '../types.js';

/**
 * SOQL text built from data: every value passes through `soqlString` (or `soqlLikeContains`) and
 * every field name through `soqlField`, so nothing from a participant or a mapping file can change
 * the query's shape.
 */

const ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  "'": "\\'",
  '"': '\\"',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

/** A quoted SOQL string literal (SOQL escapes: \\ \' \" \n \r \t \b \f). */
export function soqlString(value: string): string {
  return `'${value.replace(/[\\'"\n\r\t\b\f]/g, (c) => ESCAPES[c]!)}'`;
}

/** A LIKE pattern matching `value` anywhere; its own % and _ are escaped so they match literally. */
export function soqlLikeContains(value: string): string {
  const inner = soqlString(value)
    .slice(1, -1)
    .replace(/[%_]/g, (c) => `\\${c}`);
  return `'%${inner}%'`;
}

const FIELD_RE = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*$/;

/** A field name (or relationship path) as written in a mapping; anything else is refused. */
export function soqlField(name: string): string {
  if (!FIELD_RE.test(name)) throw new Error(`not a Salesforce field name: ${JSON.stringify(name)}`);
  return name;
}

/** Field names for SELECT, each once (SOQL refuses a duplicate column), case-insensitively. */
export function selectList(fields: string[]): string {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const f of fields) {
    const key = soqlField(f).toLowerCase();
    if (!seen.has(key)) {
      seen.add(key);
      out.push(f);
    }
  }
  return out.join(', ');
}

/** Prefixes each field with a relationship name: `Account.` + Name. */
export function related(relationship: string, fields: string[]): string[] {
  return fields.map((f) => `${relationship}.${soqlField(f)}`);
}

/**
 * ORDER BY for open opportunities; ties always go to the most recently modified. SOQL sorts nulls
 * first in either direction unless told NULLS LAST (Salesforce SOQL and SOSL Reference, ORDER BY),
 * so a deal without a close date or amount is named explicitly as last; LastModifiedDate is a
 * system field, never null.
 */
export function dealOrderBy(rule: DealRule): string {
  switch (rule.orderBy) {
    case 'close_date_asc':
      return 'CloseDate ASC NULLS LAST, LastModifiedDate DESC';
    case 'close_date_desc':
      return 'CloseDate DESC NULLS LAST, LastModifiedDate DESC';
    case 'amount_desc':
      return 'Amount DESC NULLS LAST, LastModifiedDate DESC';
    case 'last_modified_desc':
      return 'LastModifiedDate DESC';
  }
}

/** Salesforce ids are 15 or 18 alphanumerics; anything else never reaches a query. */
export function isSalesforceId(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9]{15}([A-Za-z0-9]{3})?$/.test(value);
}

/** The domain of an email address, lower-cased, or undefined when there is none. */
export function emailDomain(email: string): string | undefined {
  const at = email.lastIndexOf('@');
  const domain =
    at >= 0
      ? email
          .slice(at + 1)
          .trim()
          .toLowerCase()
      : '';
  return /^[a-z0-9.-]+\.[a-z0-9-]+$/.test(domain) ? domain : undefined;
}
