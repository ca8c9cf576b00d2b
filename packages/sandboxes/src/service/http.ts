/** Small node:http helpers shared by the API and admin routes. */
import type { IncomingMessage, ServerResponse } from 'node:http';

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** CONTRACT.md error shape: `{"error": {"code", "message"}}`. Messages never carry secrets. */
export function sendError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { error: { code, message } }, headers);
}

export type BodyResult = { ok: true; text: string } | { ok: false; reason: 'too_large' | 'aborted' };

/** Hard stop for bodies far past any limit: the socket is destroyed instead of drained. */
const DRAIN_LIMIT_BYTES = 16 * 1024 * 1024;

/**
 * Reads a request body up to `maxBytes`. A larger body is drained (not kept) so that the 413 still
 * reaches a client that is busy writing; far larger ones end the connection.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
      else if (size > DRAIN_LIMIT_BYTES) req.destroy();
    });
    req.on('end', () => {
      resolve(
        size > maxBytes
          ? { ok: false, reason: 'too_large' }
          : { ok: true, text: Buffer.concat(chunks).toString('utf8') },
      );
    });
    req.on('error', () => resolve({ ok: false, reason: 'aborted' }));
    req.on('close', () => {
      if (!req.complete) resolve({ ok: false, reason: 'aborted' });
    });
  });
}

/** Parses JSON, telling an empty body apart from a broken one. */
export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

export interface JsonBodyRules {
  maxBytes: number;
  /** The 413 message. */
  tooLargeMessage: string;
  /** Answer 415 to a non-empty body sent without a JSON content type. */
  requireJsonType?: boolean;
}

/**
 * Reads and parses a JSON body: answers 413/415/400 itself and returns undefined then (also on a
 * client that went away, which nothing can answer).
 */
export async function readJsonBody(
  req: IncomingMessage,
  res: ServerResponse,
  rules: JsonBodyRules,
): Promise<{ value: unknown } | undefined> {
  const body = await readBody(req, rules.maxBytes);
  if (!body.ok) {
    if (body.reason === 'too_large') sendError(res, 413, 'payload_too_large', rules.tooLargeMessage);
    return undefined;
  }
  const type = req.headers['content-type'] ?? '';
  if (rules.requireJsonType && body.text.trim() !== '' && !/\bjson\b/i.test(type)) {
    sendError(res, 415, 'unsupported_media_type', 'send the body as Content-Type: application/json');
    return undefined;
  }
  const parsed = parseJson(body.text);
  if (!parsed.ok) {
    sendError(res, 400, 'invalid_json', 'the body is not valid JSON');
    return undefined;
  }
  return { value: parsed.value };
}

export function splitPath(pathname: string): string[] | null {
  try {
    return pathname
      .split('/')
      .filter((part) => part !== '')
      .map((part) => decodeURIComponent(part));
  } catch {
    return null;
  }
}
