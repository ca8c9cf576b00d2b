import { isMap, isScalar, isSeq, type Document, type LineCounter, type Node, type Scalar } from 'yaml';

/** Where something sits in a mapping file: 1-based line and column. */
export interface Position {
  line: number;
  col: number;
}

type PathSegment = string | number;

/**
 * Finds the YAML node at a zod issue path. Returns the position of the value when it exists,
 * else of the key of the deepest ancestor that exists (a missing key is reported at its parent),
 * else the start of the document. `preferKey` points at the key instead (unknown keys).
 */
export function locatePath(
  doc: Document,
  lines: LineCounter,
  path: readonly PathSegment[],
  options: { preferKey?: boolean } = {},
): Position {
  let node: unknown = doc.contents;
  let lastKey: Node | null = null;
  let offset = 0;
  for (const segment of path) {
    let next: unknown;
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(segment));
      if (pair === undefined) break;
      lastKey = pair.key as Node;
      next = pair.value;
    } else if (isSeq(node) && typeof segment === 'number') {
      next = node.items[segment];
      lastKey = null;
    }
    if (next === undefined) break;
    node = next;
    offset += 1;
  }
  const found = offset === path.length;
  if (found && options.preferKey && lastKey?.range) return toPosition(lines, lastKey.range[0]);
  if (found && isNode(node) && node.range && !isEmptyScalar(node)) return toPosition(lines, node.range[0]);
  if (lastKey?.range) return toPosition(lines, lastKey.range[0]);
  if (isNode(node) && node.range) return toPosition(lines, node.range[0]);
  return { line: 1, col: 1 };
}

/**
 * Position of character `index` of a scalar's value in the file, for pointing at the exact spot
 * of a JSONata syntax error. Exact for single-line plain/quoted scalars without escapes and for
 * literal blocks (`|`); elsewhere it falls back to the scalar's start.
 */
export function locateInScalar(source: string, lines: LineCounter, node: Scalar, index: number): Position {
  const [start, end] = node.range ?? [0, 0];
  const start0 = toPosition(lines, start);
  const value = String(node.value);
  const raw = source.slice(start, end);
  const at = Math.max(0, Math.min(index, value.length - 1));
  if (node.type === 'PLAIN' && raw === value && !value.includes('\n')) {
    return { line: start0.line, col: start0.col + at };
  }
  if ((node.type === 'QUOTE_SINGLE' || node.type === 'QUOTE_DOUBLE') && raw.slice(1, -1) === value) {
    return { line: start0.line, col: start0.col + 1 + at };
  }
  if (node.type === 'BLOCK_LITERAL') {
    const before = value.slice(0, at).split('\n');
    const lineInValue = before.length - 1;
    const colInLine = before[before.length - 1]?.length ?? 0;
    const indent = blockIndent(raw);
    if (indent !== null) return { line: start0.line + 1 + lineInValue, col: indent + colInLine + 1 };
  }
  return start0;
}

/** Indentation of a literal block's content: that of its first non-blank line after the header. */
function blockIndent(raw: string): number | null {
  const contentLines = raw.split('\n').slice(1);
  for (const l of contentLines) {
    if (l.trim() !== '') return l.length - l.trimStart().length;
  }
  return null;
}

function toPosition(lines: LineCounter, offset: number): Position {
  const { line, col } = lines.linePos(offset);
  return { line, col };
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && 'range' in value;
}

/** `key:` with nothing after it parses as an empty scalar placed at the next token; report the key. */
function isEmptyScalar(node: Node): boolean {
  return isScalar(node) && node.value === null && !!node.range && node.range[0] === node.range[1];
}
