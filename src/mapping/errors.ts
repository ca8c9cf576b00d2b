/** One thing wrong with a mapping file, located for the admin who must fix it. */
export interface MappingProblem {
  file: string;
  /** 1-based; 0 when the problem has no place in the file (e.g. the file is missing). */
  line: number;
  col: number;
  /** Dotted field path, e.g. `writeback.activity.fields.hs_call_title.source`; '' for the file. */
  path: string;
  message: string;
}

/** `file:line:col: path: message`, the form editors and terminals turn into a link. */
export function formatProblem(p: MappingProblem): string {
  const where = p.line > 0 ? `${p.file}:${p.line}:${p.col}` : p.file;
  return p.path === '' ? `${where}: ${p.message}` : `${where}: ${p.path}: ${p.message}`;
}

/** A mapping file could not be loaded: thrown at start, lists every problem found. */
export class MappingError extends Error {
  readonly code = 'MAPPING_INVALID';
  readonly retryable = false;
  constructor(readonly problems: MappingProblem[]) {
    super(`Invalid mapping:\n${problems.map((p) => `  ${formatProblem(p)}`).join('\n')}`);
    this.name = 'MappingError';
  }
}

/** A field marked `required: true` came out empty for one call: that call's sync fails, not the worker. */
export class MappingRequiredMissingError extends Error {
  readonly code = 'MAPPING_REQUIRED_MISSING';
  readonly retryable = false;
  constructor(
    readonly callId: string,
    /** Dotted paths of every required field that was empty, e.g. `writeback.activity.fields.hs_timestamp`. */
    readonly fields: string[],
    where: string[],
  ) {
    super(`call ${callId}: required mapping field(s) empty: ${where.join('; ')}`);
    this.name = 'MappingRequiredMissingError';
  }
}

/** An expression failed at run time for one call (e.g. adding text to a number), or a value did not fit its type. */
export class MappingEvaluationError extends Error {
  readonly code = 'MAPPING_EVALUATION_FAILED';
  readonly retryable = false;
  constructor(
    readonly callId: string,
    readonly field: string,
    message: string,
  ) {
    super(`call ${callId}: ${message}`);
    this.name = 'MappingEvaluationError';
  }
}
