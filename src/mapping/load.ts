import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isScalar, LineCounter, parseDocument, type Document } from 'yaml';
import { DEFAULT_DEAL_RULE, type CrmName, type LookupFields } from '../crm/types.js';
import { MappingError, type MappingProblem } from './errors.js';
import { compileExpression } from './expressions.js';
import { dottedPath, problemsFromIssues } from './issues.js';
import { locateInScalar, locatePath } from './locate.js';
import {
  DEAL_OBJECTS,
  DEFAULT_AVERAGE_OF,
  mappingFileSchema,
  type FieldSpec,
  type MappingFile,
} from './schema.js';
import { toTransform } from './transforms.js';
import type { CompiledField, Mapping, WritebackTarget } from './types.js';

/** Names the input document has at its root, per section (see docs/mappings.md). */
const CONTEXT_ROOTS = ['call', 'contact', 'lead', 'company', 'deal', 'owner', 'lookup', 'crm'];
const ACTIVITY_ROOTS = [...CONTEXT_ROOTS, 'analysis', 'followups'];
const FOLLOWUP_ROOTS = [...ACTIVITY_ROOTS, 'followup'];
/** The `deal` section sees the deal's signals and calls, not one call (see src/deals/aggregate.ts). */
const DEAL_ROOTS = ['signals', 'calls', 'deal'];

/** Default objects for follow-ups, per CRM and kind. */
const FOLLOWUP_OBJECTS: Record<string, string> = {
  'hubspot:note': 'notes',
  'hubspot:task': 'tasks',
  'salesforce:email': 'EmailMessage',
  'salesforce:task': 'Task',
};

export function mappingFilePath(configDir: string, crm: CrmName): string {
  return path.join(configDir, 'mappings', `${crm}.yaml`);
}

/** Reads and compiles `${configDir}/mappings/${crm}.yaml`; throws MappingError listing every problem. */
export function loadMappings(configDir: string, crm: CrmName): Mapping {
  const file = mappingFilePath(configDir, crm);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const reason =
      (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (err as Error).message;
    throw new MappingError([{ file, line: 0, col: 0, path: '', message: reason }]);
  }
  return parseMapping(text, file, crm);
}

/** Validates and compiles mapping text; `file` only names it in errors. */
export function parseMapping(text: string, file: string, expectedCrm?: CrmName): Mapping {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  if (doc.errors.length > 0) {
    throw new MappingError(
      doc.errors.map((e) => ({
        file,
        ...lines.linePos(e.pos[0]),
        path: '',
        message: `YAML syntax error: ${e.message.split('\n')[0]}`,
      })),
    );
  }
  const raw: unknown = doc.toJS();
  const ctx = { file, doc, lines, raw, text };
  const parsed = mappingFileSchema.safeParse(raw);
  const problems = parsed.success ? [] : problemsFromIssues(parsed.error.issues, ctx);
  // Expressions are compiled even when the structure has problems, so one run lists everything.
  const compiled = compileAll(raw, ctx, problems);
  if (parsed.success && expectedCrm !== undefined && parsed.data.crm !== expectedCrm) {
    problems.push(problemAt(ctx, ['crm'], `this file is for ${parsed.data.crm}, expected ${expectedCrm}`));
  }
  if (!parsed.success || problems.length > 0) {
    throw new MappingError(problems.sort((a, b) => a.line - b.line || a.col - b.col));
  }
  return build(parsed.data, file, compiled);
}

interface Ctx {
  file: string;
  doc: Document;
  lines: LineCounter;
  raw: unknown;
  text: string;
}

type Compiled = Map<string, CompiledField>;

const SECTIONS: Array<{ path: string[]; roots: string[] }> = [
  { path: ['context', 'contact'], roots: CONTEXT_ROOTS },
  { path: ['context', 'company'], roots: CONTEXT_ROOTS },
  { path: ['context', 'deals'], roots: CONTEXT_ROOTS },
  { path: ['context', 'custom'], roots: CONTEXT_ROOTS },
  { path: ['writeback', 'activity', 'fields'], roots: ACTIVITY_ROOTS },
  { path: ['writeback', 'followups', 'fields'], roots: FOLLOWUP_ROOTS },
  { path: ['deal', 'fields'], roots: DEAL_ROOTS },
];

/** Compiles every `source` found in the raw file; returns them by field path, adds problems. */
function compileAll(raw: unknown, ctx: Ctx, problems: MappingProblem[]): Compiled {
  const out: Compiled = new Map();
  for (const section of SECTIONS) {
    const fields = getIn(raw, section.path);
    if (!isRecord(fields)) continue;
    for (const [name, spec] of Object.entries(fields)) {
      if (!isRecord(spec) || typeof spec.source !== 'string' || spec.source === '') continue;
      const sourcePath = [...section.path, name, 'source'];
      const result = compileExpression(spec.source);
      if (!result.ok) {
        const index = result.position === null ? 0 : Math.max(0, result.position - 1);
        problems.push(problemInSource(ctx, sourcePath, index, result.message));
        continue;
      }
      for (const root of result.roots) {
        if (section.roots.includes(root.name)) continue;
        const message = `unknown name "${root.name}" (the input has ${section.roots.join(', ')})`;
        problems.push(problemInSource(ctx, sourcePath, root.index, message));
      }
      const fieldPath = [...section.path, name];
      out.set(dottedPath(fieldPath), {
        name,
        path: dottedPath(fieldPath),
        line: locatePath(ctx.doc, ctx.lines, fieldPath, { preferKey: true }).line,
        source: spec.source,
        expr: result.expr,
        properties: result.properties,
        transforms: [],
        required: false,
      });
    }
  }
  return out;
}

function build(file: MappingFile, fileName: string, compiled: Compiled): Mapping {
  const fieldsOf = (sectionPath: string[], specs: Record<string, FieldSpec> | undefined): CompiledField[] =>
    Object.entries(specs ?? {}).map(([name, spec]) => {
      const base = compiled.get(dottedPath([...sectionPath, name]));
      // compileAll saw the same raw data and reported any failure, so this cannot be missing.
      if (base === undefined) throw new Error(`internal: ${name} was not compiled`);
      return {
        ...base,
        transforms: (spec.transform ?? []).map(toTransform),
        type: spec.type,
        required: spec.required ?? false,
        custom: spec.custom,
        crmType: spec.crm_type,
        label: spec.label,
      };
    });
  const rule = file.context.deal_rule;
  const followups = file.writeback.followups;
  const activity: WritebackTarget = {
    object: file.writeback.activity.object,
    idField: file.writeback.activity.id_field,
    fields: fieldsOf(['writeback', 'activity', 'fields'], file.writeback.activity.fields),
  };
  return {
    file: fileName,
    crm: file.crm,
    dealRule: {
      orderBy: rule?.order_by ?? DEFAULT_DEAL_RULE.orderBy,
      limit: rule?.limit ?? DEFAULT_DEAL_RULE.limit,
    },
    extraLookupFields: (file.lookup_fields ?? {}) as Partial<LookupFields>,
    context: {
      contact: fieldsOf(['context', 'contact'], file.context.contact),
      company: fieldsOf(['context', 'company'], file.context.company),
      deals: fieldsOf(['context', 'deals'], file.context.deals),
      custom: fieldsOf(['context', 'custom'], file.context.custom),
    },
    writeback: {
      activity,
      followups: followups
        ? {
            kind: followups.kind,
            object: followups.object ?? FOLLOWUP_OBJECTS[`${file.crm}:${followups.kind}`] ?? followups.kind,
            idField: followups.id_field,
            fields: fieldsOf(['writeback', 'followups', 'fields'], followups.fields),
          }
        : null,
    },
    deal: file.deal
      ? {
          enabled: file.deal.enabled ?? true,
          object: DEAL_OBJECTS[file.crm],
          averageOf: file.deal.average_of ?? DEFAULT_AVERAGE_OF,
          fields: fieldsOf(['deal', 'fields'], file.deal.fields),
        }
      : null,
  };
}

function problemAt(ctx: Ctx, p: Array<string | number>, message: string): MappingProblem {
  const { line, col } = locatePath(ctx.doc, ctx.lines, p);
  return { file: ctx.file, line, col, path: dottedPath(p), message };
}

/** A problem inside an expression, pointed at the character when the scalar allows it. */
function problemInSource(ctx: Ctx, p: string[], index: number, message: string): MappingProblem {
  const node = ctx.doc.getIn(p, true);
  if (!isScalar(node)) return problemAt(ctx, p, message);
  const { line, col } = locateInScalar(ctx.text, ctx.lines, node, index);
  return { file: ctx.file, line, col, path: dottedPath(p), message };
}

function getIn(raw: unknown, p: string[]): unknown {
  return p.reduce<unknown>((node, key) => (isRecord(node) ? node[key] : undefined), raw);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
