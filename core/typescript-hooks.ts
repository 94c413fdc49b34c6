// Node module hooks (module.register) that let the compiled coord import a
// user's module written in TypeScript: Node 20 cannot run .ts files, so each
// .ts/.mts module is transpiled as it loads (types stripped, not checked) with
// the `typescript` package — coord's own when it has one, else the one in the
// project coord runs in. The module's own relative .ts imports load the same
// way. Registered by typescript-modules.ts; Deno, and a Node started with a
// TypeScript loader, never get here.
import { readFile } from 'node:fs/promises';
import { createRequire, type LoadHook } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

type TypeScript = typeof import('typescript');

const TS = /\.m?ts$/;

/** The `typescript` package's entry, from coord's folder or the working directory, without loading it (that takes a second); undefined when neither has it. */
export function typescriptUrl(): string | undefined {
  for (const base of [import.meta.url, pathToFileURL(join(process.cwd(), 'noop.js')).href]) {
    try {
      return pathToFileURL(createRequire(base).resolve('typescript')).href;
    } catch {
      // not installed there
    }
  }
  return undefined;
}

let typescript: Promise<TypeScript | undefined> | undefined;

/** The `typescript` package, loaded once; undefined when it is not installed. */
export function loadTypescript(): Promise<TypeScript | undefined> {
  typescript ??= (async () => {
    const url = typescriptUrl();
    if (!url) return undefined;
    const module = (await import(url)) as TypeScript & { default?: TypeScript };
    return module.default ?? module;
  })();
  return typescript;
}

export const load: LoadHook = async (url, context, nextLoad) => {
  const path = url.startsWith('file:') ? fileURLToPath(url.split('?')[0]!) : '';
  if (!TS.test(path) || path.endsWith('.d.ts')) return nextLoad(url, context);
  const ts = await loadTypescript();
  // typescript-modules.ts checks before registering; this is for a package removed since.
  if (!ts) throw new Error(`${path}: Node needs the typescript package to load .ts files (npm install --save-dev typescript)`);
  const output = ts.transpileModule(await readFile(path, 'utf8'), {
    fileName: path,
    reportDiagnostics: true,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      inlineSourceMap: true,
      inlineSources: true,
      isolatedModules: true,
      verbatimModuleSyntax: false, // an import used only as a type is dropped, whatever the user's tsconfig says
    },
  });
  const problem = output.diagnostics?.find((d) => d.category === ts.DiagnosticCategory.Error);
  if (problem) {
    const at = problem.file && problem.start !== undefined ? problem.file.getLineAndCharacterOfPosition(problem.start) : undefined;
    throw new SyntaxError(`${at ? `${path}:${at.line + 1}:${at.character + 1}` : path}: ${ts.flattenDiagnosticMessageText(problem.messageText, ' ')}`);
  }
  return { format: 'module', source: output.outputText, shortCircuit: true };
};
