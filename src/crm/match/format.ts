/** A match decision as terminal text, for `crm-sync match` and `crm-sync status --call` (pure). */
import type { MatchChoice, MatchDecision } from '../types.js';

export function formatDecision(d: MatchDecision): string {
  const lines = [`matched by: ${d.matchedBy} (${d.crm})`];
  const slot = (title: string, c: MatchChoice) => {
    const what = c.id === null ? 'none' : `${c.label ?? '(no name)'} [${c.type} ${c.id}]`;
    lines.push(`${title.padEnd(8)} ${what}`);
    lines.push(`         ${c.rule === 'none' ? '' : `${c.rule}: `}${c.reason}`);
    const shown = c.rejected.slice(0, 10);
    for (const r of shown) lines.push(`         - not ${r.label} [${r.id}]: ${r.reason}`);
    if (c.rejected.length > shown.length)
      lines.push(`         - and ${c.rejected.length - shown.length} more`);
  };
  slot('contact', d.contact);
  slot('company', d.company);
  slot('deal', d.deal);
  return lines.join('\n');
}
