import { randomUUID } from 'node:crypto';

/**
 * HubSpot's error bodies. The generic shape is `{status:"error", message, correlationId, category,
 * subCategory?, context?, errors?[]}` (public spec `components.schemas.Error`); 429s carry
 * `errorType`/`policyName`/`requestId` instead of a category (API usage details page).
 */
export interface HubSpotErrorDetail {
  message: string;
  code?: string;
  in?: string;
  subCategory?: string;
  context?: Record<string, string[]>;
}

export interface HubSpotErrorBody {
  status: 'error';
  message: string;
  correlationId: string;
  category: string;
  subCategory?: string;
  context?: Record<string, string[]>;
  errors?: HubSpotErrorDetail[];
}

/** An error a route throws; the server turns it into the status and body. */
export class SandboxHttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: Record<string, unknown>,
  ) {
    super(String(body.message ?? 'error'));
  }
}

export function errorBody(
  category: string,
  message: string,
  extra: Partial<Omit<HubSpotErrorBody, 'status' | 'message' | 'category' | 'correlationId'>> = {},
): HubSpotErrorBody {
  return { status: 'error', message, correlationId: randomUUID(), category, ...extra };
}

export function httpError(
  statusCode: number,
  category: string,
  message: string,
  extra: Partial<Omit<HubSpotErrorBody, 'status' | 'message' | 'category' | 'correlationId'>> = {},
): SandboxHttpError {
  return new SandboxHttpError(statusCode, { ...errorBody(category, message, extra) });
}

export function validationError(message: string, errors: HubSpotErrorDetail[] = []): SandboxHttpError {
  return httpError(400, 'VALIDATION_ERROR', message, errors.length > 0 ? { errors } : {});
}

export function notFound(message = 'Object not found.  objectId are usually numeric.', id?: string) {
  return httpError(404, 'OBJECT_NOT_FOUND', message, id === undefined ? {} : { context: { id: [id] } });
}

/** One invalid property value, as HubSpot lists them inside "Property values were not valid". */
export interface PropertyProblem {
  name: string;
  error: string;
  message: string;
}

/** What the store's value check found wrong with a write (errors.ts owns it: store.ts produces it). */
export type Problem =
  { kind: 'invalid'; problems: PropertyProblem[] } | { kind: 'conflict'; error: SandboxHttpError };

/** HubSpot embeds the per-property problems as JSON in the message and lists them in `errors`. */
export function propertyValuesError(problems: PropertyProblem[]): SandboxHttpError {
  const embedded = problems.map((p) => ({
    isValid: false,
    message: p.message,
    error: p.error,
    name: p.name,
    localizedErrorMessage: p.message,
  }));
  return validationError(
    `Property values were not valid: ${JSON.stringify(embedded)}`,
    problems.map((p) => ({ message: p.message, code: p.error, context: { propertyName: [p.name] } })),
  );
}

/** Problems that fail a whole batch: an unknown property, a property required on create. */
const BATCH_WIDE = new Set(['PROPERTY_DOESNT_EXIST', 'REQUIRED_PROPERTY']);

/**
 * A batch naming a property that does not exist, or missing one the portal requires on create
 * (2026-09 write validation: "the API will return a 400 validation error"), fails as a whole with
 * one 400 VALIDATION_ERROR that does not say which input, not a 207 per input; bad values stay
 * per input. One rule for every batch write route.
 */
export function rejectUnknownProperties(problems: readonly (Problem | null | undefined)[]): void {
  const wide = problems.flatMap((p) =>
    p?.kind === 'invalid' ? p.problems.filter((x) => BATCH_WIDE.has(x.error)) : [],
  );
  if (wide.length > 0) throw propertyValuesError(wide);
}

/** `SECONDLY` is the search limit's policy (five searches per second). */
export type RateLimitPolicy = 'TEN_SECONDLY_ROLLING' | 'DAILY' | 'SECONDLY';

const RATE_LIMIT_MESSAGES: Record<RateLimitPolicy, string> = {
  DAILY: 'You have reached your daily limit.',
  TEN_SECONDLY_ROLLING: 'You have reached your ten_secondly_rolling limit.',
  SECONDLY: 'You have reached your secondly limit.',
};

/**
 * A 429 body as the HubSpot API usage guidelines ("Error responses") show it: `status`, `message`,
 * `errorType: RATE_LIMIT`, `correlationId`, `policyName`, `requestId`; "the message and policyName
 * will indicate which limit you hit (either daily or secondly)". For the search limit that is
 * "You have reached your secondly limit.", the message HubSpot's own @hubspot/api-client retries
 * as a search-limit 429 after one second (RetryDecorator, TOO_MANY_SEARCH_REQUESTS).
 */
export function rateLimitBody(policy: RateLimitPolicy): Record<string, unknown> {
  return {
    status: 'error',
    message: RATE_LIMIT_MESSAGES[policy],
    errorType: 'RATE_LIMIT',
    correlationId: randomUUID(),
    policyName: policy,
    requestId: randomUUID(),
  };
}
