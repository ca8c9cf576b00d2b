/**
 * The CRM upsert key of a follow-up draft: the call id and the draft id together. The Service
 * promises no draft id unique across calls (shared/CONTRACT.md, "What is not assumed"), so a key
 * of the draft id alone would let one call's draft overwrite another's.
 */

const escapeCallId = (callId: string) => callId.replace(/[\\:]/g, (c) => `\\${c}`);

/**
 * Format `<call id>:<draft id>`, with `\` and `:` in the call id escaped by a `\`, so that the first
 * unescaped `:` ends the call id and no two (call, draft) pairs share a key. Drafts written before
 * this key (by crm-sync before issue 22) carry the bare draft id; `draftIdOfKey` reads both.
 */
export function draftKey(callId: string, draftId: string): string {
  return `${escapeCallId(callId)}:${draftId}`;
}

/**
 * The draft id a key found on one of `callId`'s drafts stands for: the part after the call id, or
 * the key itself when it is an older bare draft id.
 */
export function draftIdOfKey(key: string, callId: string): string {
  const prefix = `${escapeCallId(callId)}:`;
  return key.startsWith(prefix) ? key.slice(prefix.length) : key;
}
