import type { Document, LineCounter } from 'yaml';
import type { z } from 'zod';
import type { MappingProblem } from './errors.js';
import { locatePath } from './locate.js';
import { TRANSFORM_NAMES } from './schema.js';

type Segment = string | number;

/** `writeback.activity.fields.hs_timestamp.transform[0].format` */
export function dottedPath(path: readonly Segment[]): string {
  return path.reduce<string>((out, s) => {
    if (typeof s === 'number') return `${out}[${s}]`;
    return out === '' ? s : `${out}.${s}`;
  }, '');
}

/** Turns zod issues into problems located in the file, in words an admin can act on. */
export function problemsFromIssues(
  issues: readonly z.core.$ZodIssue[],
  ctx: { file: string; doc: Document; lines: LineCounter; raw: unknown },
): MappingProblem[] {
  const problems: MappingProblem[] = [];
  const unknownKeyAt = new Set(
    issues.filter((i) => i.code === 'unrecognized_keys').map((i) => dottedPath(i.path as Segment[])),
  );
  for (const issue of issues) {
    const path = issue.path as Segment[];
    const inTransform = path.length >= 2 && path[path.length - 2] === 'transform';
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const keyPath = [...path, key];
        const message = inTransform
          ? `unknown transform "${key}" (expected one of ${TRANSFORM_NAMES.join(' | ')})`
          : `unknown key "${key}"`;
        problems.push(problem(ctx, keyPath, message, true));
      }
      continue;
    }
    // The "exactly one key" rule says nothing new when the key was already reported as unknown.
    if (issue.code === 'custom' && inTransform && unknownKeyAt.has(dottedPath(path))) continue;
    if (issue.code === 'invalid_type' && !hasPath(ctx.raw, path)) {
      const key = path[path.length - 1];
      problems.push(problem(ctx, path, `missing required key "${String(key)}"`, false));
      continue;
    }
    problems.push(problem(ctx, path, issue.message, false));
  }
  return problems;
}

function problem(
  ctx: { file: string; doc: Document; lines: LineCounter },
  path: Segment[],
  message: string,
  preferKey: boolean,
): MappingProblem {
  const { line, col } = locatePath(ctx.doc, ctx.lines, path, { preferKey });
  return { file: ctx.file, line, col, path: dottedPath(path), message };
}

function hasPath(raw: unknown, path: readonly Segment[]): boolean {
  let node = raw;
  for (const segment of path) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, segment)) return false;
    node = (node as Record<string | number, unknown>)[segment];
  }
  return node !== undefined;
}
