// A Node module hook (module.register) that loads a TypeScript scenario: the
// compiled CLI cannot import a .ts file on Node 20, so each .ts/.mts module is
// transpiled (types stripped, no type check) with the typescript package.
// Deno and a Node with its own TypeScript loader never use this.
import { readFile } from 'node:fs/promises';
import type { LoadHook } from 'node:module';
import { fileURLToPath } from 'node:url';

export const load: LoadHook = async (url, context, nextLoad) => {
  if (!/\.m?ts$/.test(url.split('?')[0]!) || !url.startsWith('file:') || url.includes('/node_modules/')) return nextLoad(url, context);
  let ts: typeof import('typescript');
  try {
    ts = (await import('typescript')).default;
  } catch {
    throw new Error('Node loads a .ts scenario with the typescript package, which is not installed: npm install typescript, or write the scenario as .js/.mjs');
  }
  const path = fileURLToPath(url);
  const source = await readFile(path, 'utf8');
  const out = ts.transpileModule(source, {
    fileName: path,
    reportDiagnostics: true,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      rewriteRelativeImportExtensions: true,
      inlineSourceMap: true,
    },
  });
  const syntax = out.diagnostics?.find((d) => d.category === ts.DiagnosticCategory.Error);
  if (syntax) {
    const pos = syntax.file && syntax.start !== undefined ? syntax.file.getLineAndCharacterOfPosition(syntax.start) : undefined;
    const where = pos ? `${path}:${pos.line + 1}:${pos.character + 1}` : path;
    throw new SyntaxError(`${where}: ${ts.flattenDiagnosticMessageText(syntax.messageText, ' ')}`);
  }
  return { format: 'module', source: out.outputText, shortCircuit: true };
};
