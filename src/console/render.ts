import type { FastifyReply } from 'fastify';
import type { VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';

/** Sends a server-rendered page (preact-render-to-string escapes every value it writes). */
export function sendPage(reply: FastifyReply, page: VNode, status = 200) {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .send(`<!doctype html>${renderToString(page)}`);
}
