// Every error a user can meet has a stable code, and docs/errors.md lists
// every code (Fastify keeps its FST_ERR_* the same way): a code thrown but
// not listed, or listed but thrown nowhere, fails here. Errors are coord's own
// (CoordError and its kinds), never a bare Error a caller cannot tell apart.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import t from 'tap';
import ts from 'typescript';
import { ConfigError, CoordError, StartError } from '../entries/plugin.ts';
import { root } from './support/cli.ts';

/** The shipped TypeScript sources. */
function sources(): string[] {
  const files: string[] = [];
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.push(path);
    }
  };
  for (const dir of ['core', 'entries', 'cli', 'adapters', 'plugins', 'conformance']) visit(join(root, dir));
  return files;
}

interface Found {
  codes: Map<string, string>; // code → a file that uses it
  bareThrows: string[]; // file:line of `throw new Error(`
  plainClasses: string[]; // file:line of a class that extends Error
}

/** Walks each source's syntax (comments are not code: a doc example's code does not count). */
function scan(): Found {
  const found: Found = { codes: new Map(), bareThrows: [], plainClasses: [] };
  for (const file of sources()) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const where = (node: ts.Node) => `${relative(root, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
    const visit = (node: ts.Node): void => {
      if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && /^COORD_ERR_[A-Z0-9_]+$/.test(node.text)) {
        if (!found.codes.has(node.text)) found.codes.set(node.text, where(node));
      }
      if (ts.isThrowStatement(node) && node.expression && ts.isNewExpression(node.expression) && node.expression.expression.getText() === 'Error') {
        found.bareThrows.push(where(node));
      }
      if (ts.isClassDeclaration(node)) {
        const base = node.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword)?.types[0]?.expression.getText();
        // CoordError is the root; ReplyError is Redis's own reply, whose code is Redis's.
        if (base === 'Error' && !['CoordError', 'ReplyError'].includes(node.name?.text ?? '')) found.plainClasses.push(where(node));
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** The codes docs/errors.md lists in its tables. */
function listed(): Set<string> {
  const rows = readFileSync(join(root, 'docs/errors.md'), 'utf8').split('\n').filter((line) => line.startsWith('|'));
  return new Set(rows.flatMap((row) => [...row.matchAll(/`(COORD_ERR_[A-Z0-9_]+)`/g)].map((m) => m[1]!)));
}

const found = scan();

t.test('every code the source throws is in docs/errors.md, and every code there is thrown', async (t) => {
  t.ok(found.codes.has('COORD_ERR_CONFIG'), 'the scan finds the codes');
  const inDocs = listed();
  const missing = [...found.codes].filter(([code]) => !inDocs.has(code)).map(([code, file]) => `${code} (${file})`);
  t.same(missing, [], 'codes in the source that docs/errors.md does not list');
  const stale = [...inDocs].filter((code) => !found.codes.has(code));
  t.same(stale, [], 'codes docs/errors.md lists that nothing throws');
});

t.test('no bare Error: a caller can tell every error apart by its code', async (t) => {
  t.same(found.bareThrows, [], '`throw new Error(` in shipped code');
  t.same(found.plainClasses, [], 'error classes that extend Error instead of CoordError');
});

t.test('public constructors take what the docs say', async (t) => {
  const one = new ConfigError('x');
  t.equal(one.message, 'x');
  t.same(one.problems, ['x'], 'one problem');
  t.equal(one.code, 'COORD_ERR_CONFIG', 'the kind code when no narrower one is given');
  const two = new ConfigError(['a', 'b'], { code: 'COORD_ERR_CONFIG_FILE' });
  t.equal(two.message, 'a; b');
  t.equal(two.code, 'COORD_ERR_CONFIG_FILE', 'a narrower code');
  const cause = new Error('boom');
  const start = new StartError('role x did not start', { cause });
  t.equal(start.cause, cause, 'cause is kept');
  t.ok(start instanceof CoordError && start instanceof Error);
  t.equal(start.name, 'StartError');
});
