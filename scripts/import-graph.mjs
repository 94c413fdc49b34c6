// Prints a folder's import graph (default: core/): each module and what it
// imports, types and dynamic imports included — other modules by their path
// from the project root, packages by name. test/core-imports.test.ts holds
// core to it: no edge into adapters/, cli/, plugins/ or entries/.
//   node scripts/import-graph.mjs [folder]
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Module (path from the root) → what it imports, sorted. */
export function importGraph(folder) {
  const graph = new Map();
  const visit = (dir) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const file = join(dir, entry.name);
      if (entry.isDirectory()) visit(file);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        const { importedFiles } = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
        const imports = importedFiles.map(({ fileName }) => (fileName.startsWith('.') ? relative(root, resolve(root, dir, fileName)) : fileName));
        graph.set(file, [...new Set(imports)].sort());
      }
    }
  };
  visit(folder);
  return graph;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const [file, imports] of importGraph(process.argv[2] ?? 'core')) console.log(`${file} → ${imports.join(', ') || '(nothing)'}`);
}
