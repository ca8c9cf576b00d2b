/**
 * Checks of the two POST bodies (CONTRACT.md). Each returns a message naming the bad field, so a
 * client test sees exactly what it sent wrong.
 */
import type { FollowupRequestBody } from './content.js';

const CONTEXT_SOURCES = ['hubspot', 'salesforce'];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Returns undefined when the context body is acceptable, else what is wrong. */
export function validateContext(body: unknown): string | undefined {
  if (!isObject(body)) return 'the context body must be a JSON object';
  if (body.source !== undefined && !CONTEXT_SOURCES.includes(body.source as string)) {
    return `source must be one of ${CONTEXT_SOURCES.join(', ')}`;
  }
  for (const field of ['contact', 'company', 'custom']) {
    if (body[field] !== undefined && body[field] !== null && !isObject(body[field]))
      return `${field} must be an object`;
  }
  if (body.deals !== undefined) {
    if (!Array.isArray(body.deals)) return 'deals must be an array';
    const bad = body.deals.findIndex((deal) => !isObject(deal));
    if (bad >= 0) return `deals[${bad}] must be an object`;
  }
  return undefined;
}

/** Returns the request (empty body = defaults) or what is wrong with it. */
export function validateFollowupRequest(body: unknown): FollowupRequestBody | string {
  if (body === undefined) return {};
  if (!isObject(body)) return 'the body must be a JSON object';
  const request: FollowupRequestBody = {};
  for (const field of ['tone', 'instructions'] as const) {
    const value = body[field];
    if (value === undefined) continue;
    if (typeof value !== 'string') return `${field} must be a string`;
    request[field] = value;
  }
  if (body.recipients !== undefined) {
    if (!Array.isArray(body.recipients)) return 'recipients must be an array of emails';
    const bad = body.recipients.findIndex((r) => typeof r !== 'string' || !/^[^\s@]+@[^\s@]+$/.test(r));
    if (bad >= 0) return `recipients[${bad}] must be an email address`;
    request.recipients = body.recipients as string[];
  }
  return request;
}
