/** The chaos table: one row per scenario, as Markdown so it pastes into docs/reliability.md. */
import path from 'node:path';
import type { ScenarioResult } from '../scenario.js';

export const CHAOS_DIR = path.join(import.meta.dirname, '..');

export interface Row extends ScenarioResult {
  name: string;
  seconds: number;
}

export function markdownTable(rows: Row[]): string {
  const lines = [
    '| scenario | figures | time | result |',
    '| --- | --- | ---: | --- |',
    ...rows.map((r) => {
      const figures = Object.entries(r.figures)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ');
      return `| ${r.name} | ${figures || '-'} | ${r.seconds.toFixed(0)} s | ${r.pass ? 'pass' : 'FAIL'} |`;
    }),
  ];
  return lines.join('\n');
}
