// The plugin kit stays light: what importing 'coordkit/plugin' loads — the
// static imports from entries/plugin.ts, followed through coord's own modules
// — reaches none of the heavy packages (the DI container, the config
// validator, the Redis clients, YAML, the logger, TypeScript). Type-only
// imports load nothing (verbatimModuleSyntax drops them) and dynamic import()
// loads only when called, so neither is followed. Deterministic: no timing
// (bench/kit-import.mjs measures the cost).
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import t from 'tap';
import ts from 'typescript';
import { root } from './support/cli.ts';

const HEAVY = ['ajv', 'tsyringe', 'semver', 'yaml', 'pino', 'ioredis', '@redis/client', 'ioredis-mock', 'reflect-metadata', 'typescript'];

/** Module (path from the root) → the modules and packages it loads when imported. */
function loadGraph(entry: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const visit = (file: string) => {
    if (graph.has(file)) return;
    const source = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest);
    const loads: string[] = [];
    graph.set(file, loads);
    for (const node of source.statements) {
      let specifier: ts.Expression | undefined;
      if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly) specifier = node.moduleSpecifier;
      if (ts.isExportDeclaration(node) && !node.isTypeOnly) specifier = node.moduleSpecifier;
      if (!specifier || !ts.isStringLiteral(specifier)) continue;
      const name = specifier.text;
      const target = name.startsWith('.') ? relative(root, resolve(root, dirname(file), name)) : name;
      loads.push(target);
      if (name.startsWith('.')) visit(target);
    }
  };
  visit(entry);
  return graph;
}

/** The package a specifier names ('ajv/dist/x' → 'ajv', '@redis/client/x' → '@redis/client'). */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

const graph = loadGraph('entries/plugin.ts');

t.test('the walk follows what a load follows', async (t) => {
  t.ok(graph.has('core/contract.ts'), 'a re-exported module');
  t.ok(graph.has('core/scripts.ts'), 'a module imported by a re-exported one');
  t.notOk(graph.has('core/plugin.ts'), 'a type-only re-export loads nothing');
  t.ok(
    [...graph.values()].flat().some((s) => s.startsWith('node:')),
    'built-ins are seen',
  );
  const whole = [...loadGraph('entries/coordkit.ts').values()].flat().map(packageOf);
  t.ok(whole.includes('tsyringe'), "the same walk from 'coordkit' does reach a heavy one (the DI container)");
});

t.test("importing 'coordkit/plugin' reaches none of the heavy packages", async (t) => {
  const reached = [...graph].flatMap(([file, loads]) => loads.filter((s) => HEAVY.includes(packageOf(s))).map((s) => `${file} → ${s}`));
  t.same(reached, [], 'heavy packages reached from entries/plugin.ts');
});
