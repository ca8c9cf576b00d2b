import jsonata from 'jsonata';

/**
 * JSONata expressions of a mapping: compiled once at load, checked for names the input document
 * does not have (a typo like `contcat.email` would otherwise quietly yield nothing), and read for
 * the record properties they use, so the CRM lookup asks for exactly those.
 */

export type Expression = jsonata.Expression;
/** jsonata's typings miss some node types (`path`, `bind`, `apply`); read nodes loosely. */
type AstNode = Omit<jsonata.ExprNode, 'type'> & { type: string } & Record<string, unknown>;

/** A property of a CRM record an expression reads: `contact.email` -> { record: 'contact', property: 'email' }. */
export interface PropertyRef {
  record: 'contact' | 'lead' | 'company' | 'deal' | 'owner';
  property: string;
}

/** A name read from the root of the input document, with the index where it starts in the expression. */
export interface RootName {
  name: string;
  index: number;
}

export type CompileResult =
  | { ok: true; expr: Expression; roots: RootName[]; properties: PropertyRef[] }
  | { ok: false; message: string; position: number | null };

type Roots = Map<string, number>;

const RECORD_ROOTS = new Set(['contact', 'lead', 'company', 'deal', 'owner']);
/** `lookup.<key>` -> the record type of what it holds. */
const LOOKUP_KEYS: Record<string, PropertyRef['record']> = {
  contact: 'contact',
  company: 'company',
  deals: 'deal',
  owner: 'owner',
};

export function compileExpression(source: string): CompileResult {
  let expr: Expression;
  try {
    expr = jsonata(source);
  } catch (err) {
    const e = err as Partial<jsonata.JsonataError>;
    const position = typeof e.position === 'number' ? e.position : null;
    return { ok: false, message: `JSONata syntax error: ${e.message ?? String(err)}`, position };
  }
  const roots = new Map<string, number>();
  const properties: PropertyRef[] = [];
  walk(expr.ast() as AstNode, true, roots, properties);
  // `a ?? b` expands to `$exists(a) ? a : b`, so the same property can be seen twice.
  const unique = [...new Map(properties.map((p) => [`${p.record}.${p.property}`, p])).values()];
  return { ok: true, expr, roots: [...roots].map(([name, index]) => ({ name, index })), properties: unique };
}

/**
 * Collects the names an expression reads from the root of the input document. `atRoot` is false
 * inside path steps after the first, predicates and lambda bodies, where names are relative.
 */
function walk(node: AstNode | undefined, atRoot: boolean, roots: Roots, props: PropertyRef[]): void {
  if (node === undefined || node === null || typeof node !== 'object') return;
  if (node.type === 'path') {
    walkPath(node, atRoot, roots, props);
    return;
  }
  if (node.type === 'lambda') {
    walk(node.body as AstNode, false, roots, props);
    return;
  }
  for (const [key, child] of Object.entries(node)) {
    if (key === 'position' || key === 'value' || key === 'type') continue;
    // Predicates and sort terms are evaluated against each item, not the root.
    const childAtRoot = atRoot && key !== 'stages' && key !== 'predicate' && key !== 'terms';
    walkChild(child, childAtRoot, roots, props);
  }
}

function walkChild(child: unknown, atRoot: boolean, roots: Roots, props: PropertyRef[]): void {
  if (Array.isArray(child)) {
    for (const c of child) walkChild(c, atRoot, roots, props);
  } else if (child !== null && typeof child === 'object') {
    walk(child as AstNode, atRoot, roots, props);
  }
}

function walkPath(node: AstNode, atRoot: boolean, roots: Roots, props: PropertyRef[]): void {
  const steps = (node.steps ?? []) as AstNode[];
  // `$$.x` always starts at the root; `$.x` does when the context is the root.
  let first = 0;
  const head = steps[0];
  if (head?.type === 'variable' && (head.value === '$' || (head.value === '' && atRoot))) {
    first = 1;
    atRoot = true;
  }
  const names = steps.map((s) => (s.type === 'name' && typeof s.value === 'string' ? s.value : null));
  const root = atRoot ? names[first] : null;
  if (root) {
    // jsonata positions point just past the token.
    const end = steps[first]?.position ?? root.length;
    if (!roots.has(root)) roots.set(root, Math.max(0, end - root.length));
    const second = names[first + 1];
    const third = names[first + 2];
    const ref = (record: PropertyRef['record'], property: string, next: string | null | undefined) => {
      // `deal.owner.email` is the deal owner's email (evaluate.ts), not a deal property `owner`.
      if (record !== 'deal' || property !== 'owner') props.push({ record, property });
      else if (next) props.push({ record: 'owner', property: next });
    };
    if (RECORD_ROOTS.has(root) && second) {
      ref(root as PropertyRef['record'], second, third);
    } else if (root === 'lookup' && second && LOOKUP_KEYS[second] && third) {
      ref(LOOKUP_KEYS[second], third, names[first + 3]);
    }
  }
  steps.forEach((step, i) => {
    // The first step of a path is itself at the root; everything after it is relative.
    const stepAtRoot = atRoot && i === first && step.type !== 'name';
    for (const [key, child] of Object.entries(step)) {
      if (key === 'position' || key === 'value' || key === 'type') continue;
      walkChild(child, stepAtRoot && key !== 'stages' && key !== 'predicate', roots, props);
    }
  });
}
