// Columns for people: each as wide as its widest cell, two spaces apart, a
// rule under the header; numbers (in the first row) right-aligned.
export function table(head: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const cells = [head, ...rows].map((r) => r.map(String));
  const widths = head.map((_h, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const right = head.map((_h, i) => typeof rows[0]?.[i] === 'number');
  const line = (r: readonly string[]) => r.map((c, i) => (right[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}
