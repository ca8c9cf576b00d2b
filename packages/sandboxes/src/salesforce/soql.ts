/**
 * A small SOQL parser: enough of the language for what crm-sync sends, and strict about the rest
 * (anything else is MALFORMED_QUERY, as Salesforce answers a query it cannot parse). Semantics
 * follow the Salesforce SOQL and SOSL Reference: "Comparison Operators" (= and LIKE ignore case),
 * "Quoted String Escape Sequences", "Date Formats and Date Literals" and "ORDER BY".
 *
 *   SELECT field[, field…] FROM Object
 *   [WHERE cond]  cond: cond AND|OR cond | NOT cond | (cond) | field op value | field [NOT] IN (v, …)
 *                 | field [NOT] LIKE 'pattern'     op: = != <> < <= > >=
 *   [ORDER BY field [ASC|DESC] [NULLS FIRST|LAST], …] [LIMIT n] [OFFSET n]
 *
 * Values: 'strings' (with \' \\ \n \r \t \b \f \" \% \_ escapes), numbers, true/false/null,
 * 2026-01-31, 2026-01-31T10:00:00Z, TODAY, YESTERDAY, TOMORROW, LAST_N_DAYS:n, NEXT_N_DAYS:n.
 */

export type Literal =
  | { kind: 'string'; value: string }
  | { kind: 'number'; value: number }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'null' }
  | { kind: 'date'; value: string }
  | { kind: 'datetime'; value: number }
  | { kind: 'dateRange'; from: string; to: string };

export type Condition =
  | { kind: 'and' | 'or'; left: Condition; right: Condition }
  | { kind: 'not'; cond: Condition }
  | { kind: 'compare'; field: string; op: '=' | '!=' | '<' | '<=' | '>' | '>='; value: Literal }
  | { kind: 'in'; field: string; negate: boolean; values: Literal[] }
  | { kind: 'like'; field: string; negate: boolean; pattern: string };

export interface OrderItem {
  field: string;
  desc: boolean;
  nullsLast: boolean;
}

export interface SoqlQuery {
  fields: string[];
  from: string;
  where?: Condition | undefined;
  orderBy: OrderItem[];
  limit?: number | undefined;
  offset?: number | undefined;
}

export class SoqlSyntaxError extends Error {}

/** Private-use characters standing for an escaped \% or \_ inside a LIKE pattern. */
export const LITERAL_PERCENT = '\uE000';
export const LITERAL_UNDERSCORE = '\uE001';
const unmark = (s: string): string => s.replaceAll(LITERAL_PERCENT, '%').replaceAll(LITERAL_UNDERSCORE, '_');

type Token =
  | { t: 'word'; v: string }
  | { t: 'string'; v: string }
  | { t: 'number'; v: string }
  | { t: 'op'; v: string }
  | { t: 'punct'; v: string };

const STRING_ESCAPES: Record<string, string> = {
  n: '\n',
  r: '\r',
  t: '\t',
  b: '\b',
  f: '\f',
  '"': '"',
  "'": "'",
  '\\': '\\',
};

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === "'") {
      let v = '';
      i++;
      for (;;) {
        if (i >= src.length) throw new SoqlSyntaxError('unterminated string literal');
        const d = src[i]!;
        if (d === "'") break;
        if (d === '\\') {
          const e = src[i + 1];
          if (e === undefined) throw new SoqlSyntaxError('unterminated escape');
          // \% and \_ become markers: they only differ from % and _ inside LIKE patterns.
          if (e === '%') v += LITERAL_PERCENT;
          else if (e === '_') v += LITERAL_UNDERSCORE;
          else if (e in STRING_ESCAPES) v += STRING_ESCAPES[e];
          else throw new SoqlSyntaxError(`invalid escape sequence \\${e}`);
          i += 2;
        } else {
          v += d;
          i++;
        }
      }
      i++;
      out.push({ t: 'string', v });
    } else if ('(),'.includes(c)) {
      out.push({ t: 'punct', v: c });
      i++;
    } else if ('=!<>'.includes(c)) {
      const two = src.slice(i, i + 2);
      const op = ['!=', '<>', '<=', '>='].includes(two) ? two : c;
      if (op === '!') throw new SoqlSyntaxError("unexpected '!'");
      out.push({ t: 'op', v: op === '<>' ? '!=' : op });
      i += op.length;
    } else {
      // Words, numbers, dates, datetimes and LAST_N_DAYS:n all read as one run of characters.
      const m = /^[A-Za-z0-9_.:+-]+/.exec(src.slice(i));
      if (!m) throw new SoqlSyntaxError(`unexpected character '${c}'`);
      const v = m[0];
      out.push(/^-?\d+(\.\d+)?$/.test(v) ? { t: 'number', v } : { t: 'word', v });
      i += v.length;
    }
  }
  return out;
}

const FIELD_RE = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*$/;

class Parser {
  private pos = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly todayIso: string,
  ) {}

  private peek(): Token | undefined {
    return this.tokens[this.pos];
  }
  private isWord(word: string, offset = 0): boolean {
    const tok = this.tokens[this.pos + offset];
    return tok?.t === 'word' && tok.v.toUpperCase() === word;
  }
  private expectWord(word: string): void {
    if (!this.isWord(word)) throw new SoqlSyntaxError(`expected ${word}`);
    this.pos++;
  }
  private expectPunct(p: string): void {
    const tok = this.peek();
    if (tok?.t !== 'punct' || tok.v !== p) throw new SoqlSyntaxError(`expected '${p}'`);
    this.pos++;
  }
  private field(): string {
    const tok = this.peek();
    if (tok?.t !== 'word' || !FIELD_RE.test(tok.v)) throw new SoqlSyntaxError('expected a field name');
    this.pos++;
    return tok.v;
  }
  private integer(): number {
    const tok = this.peek();
    if (tok?.t !== 'number' || !/^\d+$/.test(tok.v)) throw new SoqlSyntaxError('expected a whole number');
    this.pos++;
    return Number(tok.v);
  }

  parse(): SoqlQuery {
    this.expectWord('SELECT');
    const fields = [this.field()];
    while (this.peek()?.t === 'punct' && this.peek()!.v === ',') {
      this.pos++;
      fields.push(this.field());
    }
    this.expectWord('FROM');
    const from = this.field();
    const q: SoqlQuery = { fields, from, orderBy: [] };
    if (this.isWord('WHERE')) {
      this.pos++;
      q.where = this.or();
    }
    if (this.isWord('ORDER')) {
      this.pos++;
      this.expectWord('BY');
      do {
        if (q.orderBy.length > 0) this.pos++;
        const field = this.field();
        let desc = false;
        if (this.isWord('ASC')) this.pos++;
        else if (this.isWord('DESC')) {
          this.pos++;
          desc = true;
        }
        // "By default, null values are sorted first" (NULLS FIRST), ascending and descending alike,
        // unless NULLS LAST is given (Salesforce SOQL and SOSL Reference, ORDER BY).
        let nullsLast = false;
        if (this.isWord('NULLS')) {
          this.pos++;
          if (this.isWord('FIRST')) nullsLast = false;
          else if (this.isWord('LAST')) nullsLast = true;
          else throw new SoqlSyntaxError('expected FIRST or LAST');
          this.pos++;
        }
        q.orderBy.push({ field, desc, nullsLast });
      } while (this.peek()?.t === 'punct' && this.peek()!.v === ',');
    }
    if (this.isWord('LIMIT')) {
      this.pos++;
      q.limit = this.integer();
    }
    if (this.isWord('OFFSET')) {
      this.pos++;
      q.offset = this.integer();
    }
    if (this.pos < this.tokens.length) throw new SoqlSyntaxError(`unexpected token '${this.peek()!.v}'`);
    return q;
  }

  private or(): Condition {
    let left = this.and();
    while (this.isWord('OR')) {
      this.pos++;
      left = { kind: 'or', left, right: this.and() };
    }
    return left;
  }
  private and(): Condition {
    let left = this.not();
    while (this.isWord('AND')) {
      this.pos++;
      left = { kind: 'and', left, right: this.not() };
    }
    return left;
  }
  private not(): Condition {
    if (this.isWord('NOT')) {
      this.pos++;
      return { kind: 'not', cond: this.not() };
    }
    const tok = this.peek();
    if (tok?.t === 'punct' && tok.v === '(') {
      this.pos++;
      const inner = this.or();
      this.expectPunct(')');
      return inner;
    }
    return this.comparison();
  }
  private comparison(): Condition {
    const field = this.field();
    const negate = this.isWord('NOT') && (this.isWord('IN', 1) || this.isWord('LIKE', 1));
    if (negate) this.pos++;
    if (this.isWord('IN')) {
      this.pos++;
      this.expectPunct('(');
      const values = [this.literal()];
      while (this.peek()?.t === 'punct' && this.peek()!.v === ',') {
        this.pos++;
        values.push(this.literal());
      }
      this.expectPunct(')');
      return { kind: 'in', field, negate, values };
    }
    if (this.isWord('LIKE')) {
      this.pos++;
      const tok = this.peek();
      if (tok?.t !== 'string') throw new SoqlSyntaxError('LIKE needs a string');
      this.pos++;
      return { kind: 'like', field, negate, pattern: tok.v };
    }
    const tok = this.peek();
    if (tok?.t !== 'op') throw new SoqlSyntaxError('expected an operator');
    this.pos++;
    return { kind: 'compare', field, op: tok.v as '=', value: this.literal() };
  }

  private literal(): Literal {
    const tok = this.peek();
    if (!tok) throw new SoqlSyntaxError('expected a value');
    this.pos++;
    if (tok.t === 'string') return { kind: 'string', value: unmark(tok.v) };
    if (tok.t === 'number') return { kind: 'number', value: Number(tok.v) };
    if (tok.t !== 'word') throw new SoqlSyntaxError(`unexpected '${tok.v}'`);
    const upper = tok.v.toUpperCase();
    if (upper === 'TRUE' || upper === 'FALSE') return { kind: 'boolean', value: upper === 'TRUE' };
    if (upper === 'NULL') return { kind: 'null' };
    if (/^\d{4}-\d{2}-\d{2}$/.test(tok.v)) return { kind: 'date', value: tok.v };
    if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$/.test(tok.v)) {
      return { kind: 'datetime', value: Date.parse(tok.v.replace(/([+-]\d{2})(\d{2})$/, '$1:$2')) };
    }
    return this.dateKeyword(upper);
  }

  private dateKeyword(upper: string): Literal {
    const day = (offset: number): string => shiftDay(this.todayIso, offset);
    if (upper === 'TODAY') return { kind: 'dateRange', from: day(0), to: day(0) };
    if (upper === 'YESTERDAY') return { kind: 'dateRange', from: day(-1), to: day(-1) };
    if (upper === 'TOMORROW') return { kind: 'dateRange', from: day(1), to: day(1) };
    const m = /^(LAST|NEXT)_N_DAYS:(\d+)$/.exec(upper);
    if (m) {
      const n = Number(m[2]);
      // LAST_N_DAYS includes today; NEXT_N_DAYS starts tomorrow (SOQL date literal reference).
      return m[1] === 'LAST'
        ? { kind: 'dateRange', from: day(-n), to: day(0) }
        : { kind: 'dateRange', from: day(1), to: day(n) };
    }
    throw new SoqlSyntaxError(`unexpected '${upper}'`);
  }
}

function shiftDay(iso: string, days: number): string {
  const d = new Date(`${iso}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** Parses `soql`; date keywords are relative to `todayIso` (YYYY-MM-DD, UTC). */
export function parseSoql(soql: string, todayIso: string): SoqlQuery {
  return new Parser(tokenize(soql), todayIso).parse();
}
