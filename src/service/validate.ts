import type { z } from 'zod';
import { ServiceResponseError, type ServiceErrorContext } from './errors.js';

/** `['data', 3, 'id']` -> `data[3].id`; the root is `(body)`. */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out === '' ? '(body)' : out;
}

/** One line per issue, naming the field; values are never echoed (they may be personal data). */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((issue) => {
    const field = formatIssuePath(issue.path);
    const missing = issue.code === 'invalid_type' && /received undefined/.test(issue.message);
    return missing ? `${field} is missing` : `${field}: ${issue.message}`;
  });
}

/** Parses a response body, or throws ServiceResponseError naming the first bad field. */
export function parseResponse<S extends z.ZodType>(
  schema: S,
  value: unknown,
  context: ServiceErrorContext,
): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems = describeIssues(result.error.issues);
  const field = formatIssuePath(result.error.issues[0]?.path ?? []);
  const more = problems.length > 1 ? ` (+${problems.length - 1} more)` : '';
  throw new ServiceResponseError(
    `${context.method} ${context.path} returned a body that breaks the contract: ${problems[0]}${more}`,
    context,
    field,
    problems,
  );
}

/** Parses response text as JSON, or throws ServiceResponseError. */
export function parseJsonText(text: string, context: ServiceErrorContext): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ServiceResponseError(
      `${context.method} ${context.path} returned a body that is not JSON`,
      context,
      '(body)',
      ['(body) is not JSON'],
    );
  }
}
