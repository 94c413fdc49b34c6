// Node module hooks (module.register) that let the compiled coord import a
// user's TypeScript worker: .ts/.mts files are transpiled with the
// `typescript` package as they load, so the worker's own relative .ts imports
// work too. Types are stripped, not checked. Deno needs none of this.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { loadTypescript } from './typescript.ts';

interface LoadResult {
  format?: string;
  source?: string | ArrayBuffer | Uint8Array;
  shortCircuit?: boolean;
}
type NextLoad = (url: string, context: unknown) => Promise<LoadResult>;

const TS = /\.m?ts$/;

export async function load(url: string, context: unknown, nextLoad: NextLoad): Promise<LoadResult> {
  const path = url.startsWith('file:') ? fileURLToPath(url.split('?')[0]!) : '';
  if (!TS.test(path) || path.endsWith('.d.ts')) return nextLoad(url, context);
  const ts = await loadTypescript();
  if (!ts) throw new Error(`${path}: Node needs the typescript package to run .ts files (npm install typescript)`);
  const source = await readFile(path, 'utf8');
  const output = ts.transpileModule(source, {
    fileName: path,
    reportDiagnostics: true,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      sourceMap: false,
      inlineSourceMap: true,
      inlineSources: true,
      verbatimModuleSyntax: false,
      isolatedModules: true,
    },
  });
  const problem = output.diagnostics?.find((d) => d.category === ts.DiagnosticCategory.Error);
  if (problem) {
    const where = problem.file && problem.start !== undefined ? problem.file.getLineAndCharacterOfPosition(problem.start) : undefined;
    const at = where ? `${path}:${where.line + 1}:${where.character + 1}` : path;
    throw new SyntaxError(`${at}: ${ts.flattenDiagnosticMessageText(problem.messageText, ' ')}`);
  }
  return { format: 'module', source: output.outputText, shortCircuit: true };
}
