export interface TableOptions {
  /**
   * Text for a terminal this wide: every column left-aligned, the last one (a reason, a detail)
   * wrapped onto continuation lines, never cut, and any other column wider than a third of the
   * width cut with an ellipsis. Without it, numbers are right-aligned and nothing is cut (the
   * benchmark's table).
   */
  width?: number;
}

/** Renders rows as a plain aligned text table, for benchmarks and the CLI. */
export function formatTable(
  headers: string[],
  rows: (string | number)[][],
  options: TableOptions = {},
): string {
  if (options.width !== undefined) return textTable(headers, rows, options.width);
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(cells[0]!), rule, ...cells.slice(1).map(line)].join('\n');
}

function textTable(headers: string[], rows: (string | number)[][], width: number): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => String(c).replace(/\s+/g, ' ')))];
  const last = headers.length - 1;
  const cap = Math.max(8, Math.floor(width / 3));
  const widths = headers.map((_, i) => Math.min(cap, Math.max(...cells.map((r) => (r[i] ?? '').length))));
  const offset = widths.slice(0, last).reduce((sum, w) => sum + w + 2, 0);
  const lastWidth = Math.max(20, width - offset);
  widths[last] = Math.min(lastWidth, Math.max(...cells.map((r) => (r[last] ?? '').length)));
  const cut = (text: string, w: number) => (text.length <= w ? text : `${text.slice(0, w - 1)}…`);
  const lines = (r: string[]) => {
    const head = r.slice(0, last).map((c, i) => cut(c, widths[i]!).padEnd(widths[i]!));
    const [first = '', ...more] = wrap(r[last] ?? '', lastWidth);
    return [[...head, first].join('  ').trimEnd(), ...more.map((m) => `${' '.repeat(offset)}${m}`)];
  };
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [...lines(cells[0]!), rule, ...cells.slice(1).flatMap(lines)].join('\n');
}

/** `text` in lines of at most `width`, broken at spaces where there are any. */
function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > width) {
    const space = rest.lastIndexOf(' ', width);
    const at = space > width / 2 ? space : width;
    out.push(rest.slice(0, at).trimEnd());
    rest = rest.slice(at).trimStart();
  }
  out.push(rest);
  return out;
}
