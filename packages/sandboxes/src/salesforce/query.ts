import { findField, isNumberType, isStringType, type FieldDef, type ObjectDef } from './schema.js';
import { LITERAL_PERCENT, LITERAL_UNDERSCORE, type Condition, type Literal, type SoqlQuery } from './soql.js';
import { RequestError, type OrgStore, type SfRecord } from './store.js';

/** A resolved field path: the reference hops (relationship fields) and the final field. */
interface FieldPath {
  /** As written in the query, for error messages. */
  text: string;
  hops: FieldDef[];
  /** Canonical relationship names along the way, for the nested output. */
  names: string[];
  field: FieldDef;
}

/** Runs a parsed query against the store; returns the rows as Salesforce serialises them. */
export function runQuery(store: OrgStore, q: SoqlQuery, baseUrl: string): Record<string, unknown>[] {
  let obj: ObjectDef;
  try {
    obj = store.object(q.from);
  } catch {
    throw new RequestError(400, 'INVALID_TYPE', `sObject type '${q.from}' is not supported.`);
  }
  const resolve = (text: string): FieldPath => resolvePath(store, obj, text);
  const selected = q.fields.map(resolve);
  const order = q.orderBy.map((o) => ({ ...o, path: resolve(o.field) }));
  const where = q.where;
  const test = where ? compileCondition(store, where, resolve) : () => true;

  let rows = store.all(obj.name).filter(test);
  if (order.length > 0) {
    rows = rows.sort((a, b) => {
      for (const o of order) {
        const va = valueAt(store, a, o.path);
        const vb = valueAt(store, b, o.path);
        const an = va === null || va === undefined;
        const bn = vb === null || vb === undefined;
        if (an || bn) {
          if (an && bn) continue;
          return (an ? 1 : -1) * (o.nullsLast ? 1 : -1);
        }
        const c = compareTyped(o.path.field, va, vb);
        if (c !== 0) return o.desc ? -c : c;
      }
      return 0;
    });
  }
  const offset = q.offset ?? 0;
  rows = rows.slice(offset, q.limit === undefined ? undefined : offset + q.limit);
  return rows.map((rec) => project(store, obj, rec, selected, baseUrl));
}

function resolvePath(store: OrgStore, obj: ObjectDef, text: string): FieldPath {
  const segments = text.split('.');
  const hops: FieldDef[] = [];
  const names: string[] = [];
  let current: ObjectDef[] = [obj];
  const noSuch = (): never => {
    throw new RequestError(400, 'INVALID_FIELD', `No such column '${text}' on entity '${obj.name}'.`, [text]);
  };
  for (let i = 0; i < segments.length - 1; i++) {
    const seg = segments[i]!.toLowerCase();
    const ref = current
      .flatMap((o) => o.fields)
      .find((fd) => fd.type === 'reference' && fd.relationshipName?.toLowerCase() === seg);
    if (!ref) return noSuch();
    hops.push(ref);
    names.push(ref.relationshipName!);
    current = ref.referenceTo
      .map((t) => store.schema.get(t.toLowerCase()))
      .filter((o): o is ObjectDef => !!o);
  }
  const last = segments[segments.length - 1]!;
  const field = current.map((o) => findField(o, last)).find((fd) => fd !== undefined);
  return field ? { text, hops, names, field } : noSuch();
}

function follow(store: OrgStore, rec: SfRecord, hops: FieldDef[]): SfRecord | null {
  let cur: SfRecord | null = rec;
  for (const hop of hops) {
    const id: unknown = cur?.[hop.name];
    cur = typeof id === 'string' ? (store.findById(id)?.rec ?? null) : null;
    if (!cur) return null;
  }
  return cur;
}

function valueAt(store: OrgStore, rec: SfRecord, path: FieldPath): unknown {
  const target = follow(store, rec, path.hops);
  return target ? (target[path.field.name] ?? null) : null;
}

function project(
  store: OrgStore,
  obj: ObjectDef,
  rec: SfRecord,
  paths: FieldPath[],
  baseUrl: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = { attributes: attributes(obj.name, rec.Id, baseUrl) };
  for (const path of paths) {
    let node = out;
    let cur: SfRecord | null = rec;
    for (let i = 0; i < path.hops.length; i++) {
      const name = path.names[i]!;
      cur = follow(store, cur!, [path.hops[i]!]);
      if (!cur) {
        node[name] = null;
        break;
      }
      const existing = node[name];
      if (existing === null || typeof existing !== 'object') {
        const type = store.findById(cur.Id)!.obj.name;
        node[name] = { attributes: attributes(type, cur.Id, baseUrl) };
      }
      node = node[name] as Record<string, unknown>;
    }
    if (cur) node[path.field.name] = cur[path.field.name] ?? null;
  }
  return out;
}

function attributes(type: string, id: string, baseUrl: string): { type: string; url: string } {
  return { type, url: `${baseUrl}/sobjects/${type}/${id}` };
}

type Test = (rec: SfRecord) => boolean;

function compileCondition(store: OrgStore, cond: Condition, resolve: (t: string) => FieldPath): Test {
  switch (cond.kind) {
    case 'and': {
      const l = compileCondition(store, cond.left, resolve);
      const r = compileCondition(store, cond.right, resolve);
      return (rec) => l(rec) && r(rec);
    }
    case 'or': {
      const l = compileCondition(store, cond.left, resolve);
      const r = compileCondition(store, cond.right, resolve);
      return (rec) => l(rec) || r(rec);
    }
    case 'not': {
      const inner = compileCondition(store, cond.cond, resolve);
      return (rec) => !inner(rec);
    }
    case 'like': {
      const path = resolve(cond.field);
      const re = likeToRegExp(cond.pattern);
      return (rec) => {
        const v = valueAt(store, rec, path);
        const hit = typeof v === 'string' && re.test(v);
        return cond.negate ? !hit : hit;
      };
    }
    case 'in': {
      const path = resolve(cond.field);
      cond.values.forEach((lit) => checkLiteral(path, lit));
      return (rec) => {
        const v = valueAt(store, rec, path);
        const hit = cond.values.some((lit) => matches(path.field, v, '=', lit));
        return cond.negate ? !hit : hit;
      };
    }
    case 'compare': {
      const path = resolve(cond.field);
      checkLiteral(path, cond.value);
      return (rec) => matches(path.field, valueAt(store, rec, path), cond.op, cond.value);
    }
  }
}

function likeToRegExp(pattern: string): RegExp {
  let src = '';
  for (const ch of pattern) {
    if (ch === '%') src += '.*';
    else if (ch === '_') src += '.';
    else if (ch === LITERAL_PERCENT) src += '%';
    else if (ch === LITERAL_UNDERSCORE) src += '_';
    else src += ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${src}$`, 'is');
}

/** Refuses literals of the wrong kind for the field, as Salesforce does when it parses the query. */
function checkLiteral(path: FieldPath, lit: Literal): void {
  const t = path.field.type;
  const ok =
    lit.kind === 'null' ||
    (lit.kind === 'string' && (isStringType(t) || t === 'id' || t === 'reference')) ||
    (lit.kind === 'number' && isNumberType(t)) ||
    (lit.kind === 'boolean' && t === 'boolean') ||
    ((lit.kind === 'date' || lit.kind === 'dateRange') && (t === 'date' || t === 'datetime')) ||
    (lit.kind === 'datetime' && t === 'datetime');
  if (!ok) {
    throw new RequestError(
      400,
      'INVALID_FIELD',
      `value of filter criterion for field '${path.text}' must be of type ${t}`,
      [path.text],
    );
  }
}

function matches(fd: FieldDef, value: unknown, op: string, lit: Literal): boolean {
  const isNull = value === null || value === undefined;
  if (lit.kind === 'null') return op === '=' ? isNull : op === '!=' ? !isNull : false;
  // SOQL: `Field != 'x'` also returns rows where Field is null.
  if (isNull) return op === '!=';
  if (lit.kind === 'dateRange') {
    const day = String(value).slice(0, 10);
    const inside = day >= lit.from && day <= lit.to;
    if (op === '=') return inside;
    if (op === '!=') return !inside;
    const c = day < lit.from ? -1 : day > lit.to ? 1 : 0;
    return applyOp(op, c);
  }
  const litValue =
    lit.kind === 'date' && fd.type === 'datetime' ? Date.parse(`${lit.value}T00:00:00Z`) : lit.value;
  return applyOp(op, compareTyped(fd, value, litValue));
}

function applyOp(op: string, c: number): boolean {
  switch (op) {
    case '=':
      return c === 0;
    case '!=':
      return c !== 0;
    case '<':
      return c < 0;
    case '<=':
      return c <= 0;
    case '>':
      return c > 0;
    default:
      return c >= 0;
  }
}

/** Orders two values of the field's type; text compares case-insensitively, as SOQL does. */
function compareTyped(fd: FieldDef, a: unknown, b: unknown): number {
  if (fd.type === 'datetime') {
    const ta = typeof a === 'number' ? a : Date.parse(String(a).replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
    const tb = typeof b === 'number' ? b : Date.parse(String(b).replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
    return Math.sign(ta - tb);
  }
  if (isNumberType(fd.type)) return Math.sign(Number(a) - Number(b));
  if (fd.type === 'boolean') return a === b ? 0 : a ? 1 : -1;
  const sa = String(a);
  const sb = String(b);
  if (fd.type === 'id' || fd.type === 'reference') return sa < sb ? -1 : sa > sb ? 1 : 0;
  const la = sa.toLowerCase();
  const lb = sb.toLowerCase();
  return la < lb ? -1 : la > lb ? 1 : 0;
}
