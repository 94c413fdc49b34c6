// Writes docs/api.md, the API reference, from the package itself: each entry
// of package.json "exports" (its source, from its types: ./dist/entries/x.d.ts → ./entries/x.ts),
// every name it exports (followed through re-exports by the TypeScript
// checker), its kind, its signature, its doc comment and its @example blocks.
// Names are grouped as the entry file groups them (the `//` line above an
// export); the plugin kit is documented once, under coordkit/plugin.
// test/api-docs.test.ts fails while docs/api.md is stale or a value export has
// no example.
//   node scripts/api-docs.mjs           writes docs/api.md
//   node scripts/api-docs.mjs --check   exits 1, naming what differs, when it is stale
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const API_FILE = 'docs/api.md';

/** The source an export-map entry's types come from: ./dist/entries/coordkit.d.ts → entries/coordkit.ts. */
function sourceOf(entry) {
  return entry.types.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, '.ts');
}

/** 'coordkit' for '.', 'coordkit/plugin' for './plugin'. */
function specifierOf(name, key) {
  return key === '.' ? name : `${name}/${key.slice(2)}`;
}

/**
 * The package's API as data: its entries in export-map order, each with its
 * introduction (the file's first comment), the entries it re-exports whole,
 * and its own names in groups.
 */
export function readApi() {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const keys = Object.keys(pkg.exports).filter((key) => key !== './package.json');
  const sources = new Map(keys.map((key) => [join(root, sourceOf(pkg.exports[key])), key]));
  const parsed = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  const program = ts.createProgram([...sources.keys()], { ...parsed.options, noEmit: true });
  const checker = program.getTypeChecker();
  const entries = keys.map((key) => {
    const file = join(root, sourceOf(pkg.exports[key]));
    const source = program.getSourceFile(file);
    const exported = new Map(checker.getExportsOfModule(checker.getSymbolAtLocation(source)).map((s) => [s.name, s]));
    const { intro, groups, reexports } = entryLayout(source, sources, checker);
    const placed = new Set(groups.flatMap((g) => g.names));
    const others = [...exported.keys()].filter((n) => !placed.has(n) && !reexports.some((r) => r.names.has(n))).sort();
    if (others.length) groups.push({ title: groups.length ? 'Other' : '', note: '', names: others });
    return {
      key,
      specifier: specifierOf(pkg.name, key),
      source: relative(root, file),
      intro,
      reexports: reexports.map((r) => specifierOf(pkg.name, r.key)),
      groups: byKindUnlessGrouped(
        groups.map((g) => ({ ...g, names: g.names.filter((n) => exported.has(n)).map((n) => describe(n, exported.get(n), checker)) })).filter((g) => g.names.length),
      ),
    };
  });
  return { name: pkg.name, entries };
}

/** Kinds as headings, for an entry whose file does not group its exports itself (a few names stay as they are). */
const KIND_GROUPS = [
  ['Functions', (item) => item.kind === 'function'],
  ['Classes', (item) => item.kind === 'class'],
  ['Constants', (item) => item.value && item.kind !== 'function' && item.kind !== 'class'],
  ['Types', (item) => !item.value],
];

function byKindUnlessGrouped(groups) {
  if (groups.some((g) => g.title) || groups.flatMap((g) => g.names).length <= 4) return groups;
  const items = groups.flatMap((g) => g.names);
  return KIND_GROUPS.map(([title, test]) => ({ title, note: '', names: items.filter(test) })).filter((g) => g.names.length);
}

/** Comment blocks (runs of `//` lines, split at blank lines) before a position. */
function lineCommentBlocks(text, pos) {
  const blocks = [];
  let block = [];
  let lastEnd = -1;
  for (const range of ts.getLeadingCommentRanges(text, pos) ?? []) {
    if (range.kind !== ts.SyntaxKind.SingleLineCommentTrivia) continue;
    const gap = lastEnd < 0 ? '' : text.slice(lastEnd, range.pos);
    if (block.length && /\n\s*\n/.test(gap)) {
      blocks.push(block);
      block = [];
    }
    block.push(text.slice(range.pos + 2, range.end).replace(/^ /, ''));
    lastEnd = range.end;
  }
  if (block.length) blocks.push(block);
  // Only a block that touches the statement (no blank line between) is its heading.
  const touching = lastEnd >= 0 && !/\n\s*\n/.test(text.slice(lastEnd, ts.skipTrivia(text, pos)));
  return { blocks, touching };
}

/** An entry file's introduction, its export groups in source order, and the entries it re-exports whole. */
function entryLayout(source, entrySources, checker) {
  const text = source.text;
  const groups = [];
  const reexports = [];
  let intro = [];
  let current;
  const reexportsOnly = source.statements.every((s) => ts.isExportDeclaration(s));
  source.statements.forEach((statement, index) => {
    const { blocks, touching } = lineCommentBlocks(text, statement.pos);
    // An entry file's header speaks to users; a module's (an adapter's) to its maintainers: its export's doc comment is what users read.
    if (index === 0 && blocks.length && reexportsOnly) intro = blocks.length > 1 || !touching ? blocks[0] : blocks.pop();
    const heading = touching && blocks.length && !(index === 0 && blocks.length === 1) ? blocks.at(-1) : undefined;
    if (ts.isExportDeclaration(statement)) {
      if (heading || !current) groups.push((current = { ...groupTitle(heading), names: [] }));
      const target = statement.moduleSpecifier && resolve(dirname(source.fileName), statement.moduleSpecifier.text);
      if (!statement.exportClause) {
        const moduleSymbol = checker.getSymbolAtLocation(statement.moduleSpecifier);
        const names = checker.getExportsOfModule(moduleSymbol).map((s) => s.name);
        if (entrySources.has(target)) reexports.push({ key: entrySources.get(target), names: new Set(names) });
        else current.names.push(...names.sort());
      } else if (ts.isNamedExports(statement.exportClause)) {
        current.names.push(...statement.exportClause.elements.map((e) => e.name.text));
      }
    } else if (ts.getCombinedModifierFlags(statement) & ts.ModifierFlags.Export) {
      if (!current) groups.push((current = { title: '', note: '', names: [] }));
      const names = ts.isVariableStatement(statement) ? statement.declarationList.declarations.map((d) => d.name.getText(source)) : [statement.name?.text ?? 'default'];
      current.names.push(...names);
    }
  });
  return { intro, groups, reexports };
}

/** "Errors: match on `err.code`" → title "Errors", note "match on `err.code`." */
function groupTitle(lines) {
  if (!lines) return { title: '', note: '' };
  const line = lines.join(' ').trim();
  const match = /^(.*?)(?:: | \()(.*)$/.exec(line);
  if (!match) return { title: line, note: '' };
  const note = match[2].replace(/\)$/, '').trim();
  return { title: match[1], note: note && `${note}${/[.!?]$/.test(note) ? '' : '.'}` };
}

/** One exported name: kind, whether it exists at run time, signature, doc text, tags. */
function describe(name, symbol, checker) {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  const declarations = target.declarations ?? [];
  const tags = target.getJsDocTags(checker).map((tag) => ({ name: tag.name, text: ts.displayPartsToString(tag.text).trim() }));
  const file = declarations[0]?.getSourceFile();
  const path = file ? relative(root, file.fileName) : '';
  return {
    name,
    kind: kindOf(declarations, checker),
    value: Boolean(target.flags & ts.SymbolFlags.Value),
    // A package's own type (tsyringe's DependencyContainer) is named by its package.
    from: path.startsWith('node_modules/') ? (/^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? path) : path,
    external: path.startsWith('node_modules/'),
    signature: signatureOf(name, declarations, checker),
    doc: ts.displayPartsToString(target.getDocumentationComment(checker)).trim(),
    examples: tags.filter((t) => t.name === 'example').map((t) => t.text),
    tags: tags.filter((t) => t.name !== 'example'),
  };
}

function kindOf(declarations, checker) {
  const kinds = declarations.map((d) => {
    if (ts.isClassDeclaration(d)) return 'class';
    if (ts.isFunctionDeclaration(d)) return 'function';
    if (ts.isVariableDeclaration(d)) return checker.getTypeAtLocation(d).getCallSignatures().length ? 'function' : 'const';
    if (ts.isInterfaceDeclaration(d)) return 'interface';
    if (ts.isTypeAliasDeclaration(d)) return 'type';
    if (ts.isEnumDeclaration(d)) return 'enum';
    return 'value';
  });
  return [...new Set(kinds)].join(' and ');
}

/** A declaration's source text, without `export`, its body or its doc comment, under its public name. */
function headerText(node, end, name) {
  const source = node.getSourceFile();
  const start = node.getStart(source);
  let text = source.text.slice(start, end);
  if (node.name && node.name.getStart(source) >= start && node.name.end <= end) {
    const at = node.name.getStart(source) - start;
    text = `${text.slice(0, at)}${name}${text.slice(node.name.end - start)}`;
  }
  return text.replace(/^(export\s+)?(default\s+)?(declare\s+)?/, '').trim().replace(/;$/, '');
}

function signatureOf(name, declarations, checker) {
  const parts = [];
  const functions = declarations.filter(ts.isFunctionDeclaration);
  const overloads = functions.filter((f) => !f.body);
  for (const fn of overloads.length ? overloads : functions) parts.push(headerText(fn, fn.body ? fn.body.getStart() : fn.end, name));
  for (const d of declarations) {
    if (d.getSourceFile().fileName.includes('/node_modules/')) continue;
    if (ts.isClassDeclaration(d)) parts.push(classText(d, name, checker));
    else if (ts.isInterfaceDeclaration(d) || ts.isTypeAliasDeclaration(d) || ts.isEnumDeclaration(d)) parts.push(headerText(d, d.end, name));
    else if (ts.isVariableDeclaration(d)) {
      const keyword = d.parent.flags & ts.NodeFlags.Const ? 'const' : 'let';
      const type = d.type ? d.type.getText() : checker.typeToString(checker.getTypeAtLocation(d), d, ts.TypeFormatFlags.NoTruncation);
      parts.push(`${keyword} ${name}: ${type}`);
    }
  }
  return parts.join('\n\n');
}

/** A class's heading and its public and protected members, without bodies or initializers. */
function classText(node, name, checker) {
  const source = node.getSourceFile();
  const lines = [`${headerText(node, node.members.pos, name).replace(/\{$/, '').trim()} {`];
  for (const member of node.members) {
    const flags = ts.getCombinedModifierFlags(member);
    if (flags & ts.ModifierFlags.Private || (member.name && ts.isPrivateIdentifier(member.name)) || ts.isClassStaticBlockDeclaration(member)) continue;
    if (ts.isIndexSignatureDeclaration(member) || ts.isSemicolonClassElement(member)) continue;
    const start = member.getStart(source, true);
    let end = member.end;
    if ('body' in member && member.body) end = member.body.getStart(source);
    else if ('initializer' in member && member.initializer) end = member.initializer.pos;
    let text = source.text
      .slice(start, end)
      .trim()
      .replace(/\s*=$/, '')
      .replace(/;$/, '');
    if (ts.isPropertyDeclaration(member) && !member.type) {
      text += `: ${checker.typeToString(checker.getTypeAtLocation(member), member, ts.TypeFormatFlags.NoTruncation)}`;
    }
    text += ';';
    lines.push(...text.split('\n').map((line, i) => (i === 0 ? `  ${line}` : line)));
  }
  lines.push('}');
  return lines.join('\n');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes, repeats numbered. */
function slugger() {
  const seen = new Map();
  return (heading) => {
    const base = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    return count ? `${base}-${count}` : base;
  };
}

/** A `//` header as markdown: prose lines joined, indented lines as code. */
function introMarkdown(lines) {
  const out = [];
  let code = false;
  for (const line of lines) {
    const isCode = /^ {2}\S/.test(line);
    if (isCode && !code) out.push('', '```ts');
    if (!isCode && code) out.push('```', '');
    out.push(isCode ? line.slice(2) : line);
    code = isCode;
  }
  if (code) out.push('```');
  return out.join('\n').trim();
}

function fenced(text, lang = 'ts') {
  return text.includes('```') ? text : `\`\`\`${lang}\n${text}\n\`\`\``;
}

function tagLine(tag) {
  if (tag.name === 'param') {
    const [param, ...rest] = tag.text.split(' ');
    return `- \`${param}\`: ${rest.join(' ').replace(/^- /, '')}`;
  }
  return `- **@${tag.name}** ${tag.text}`;
}

/** docs/api.md's text. */
export function renderApi(api) {
  const slug = slugger();
  const anchors = new Map();
  // Anchors in document order, as GitHub numbers repeated headings.
  for (const entry of api.entries) {
    anchors.set(entry.specifier, slug(`\`${entry.specifier}\``));
    for (const group of entry.groups) {
      if (group.title) slug(group.title);
      for (const item of group.names) anchors.set(`${entry.specifier}#${item.name}`, slug(`\`${item.name}\``));
    }
  }
  const out = [
    '# API reference',
    '',
    '<!-- Written by scripts/api-docs.mjs from the doc comments in the sources: edit those, then run `node scripts/api-docs.mjs`; test/api-docs.test.ts fails while this file is stale. -->',
    '',
    `Every name the \`${api.name}\` package exports, entry point by entry point (package.json \`exports\`), with its kind, its signature, what it is for and an example for each function and class. Each name is exported from one entry only, but \`${api.name}\` re-exports everything in \`${api.name}/plugin\`. Other guides: [plugins](plugins.md), [embedding](embedding.md), [errors](errors.md), [load tests](load-test.md).`,
    '',
    '## Entry points',
    '',
  ];
  for (const entry of api.entries) {
    const names = entry.groups.flatMap((g) => g.names.map((n) => `[\`${n.name}\`](#${anchors.get(`${entry.specifier}#${n.name}`)})`));
    const also = entry.reexports.map((r) => `everything in [\`${r}\`](#${anchors.get(r)})`);
    out.push(`- [\`${entry.specifier}\`](#${anchors.get(entry.specifier)}): ${[...also, ...names].join(', ')}`);
  }
  for (const entry of api.entries) {
    out.push('', `## \`${entry.specifier}\``, '', `\`import { … } from '${entry.specifier}'\` — [${entry.source}](../${entry.source})`);
    if (entry.intro.length) out.push('', introMarkdown(entry.intro));
    for (const r of entry.reexports) out.push('', `Re-exports every name of [\`${r}\`](#${anchors.get(r)}), documented there.`);
    const headed = entry.groups.some((g) => g.title);
    for (const group of entry.groups) {
      if (group.title) out.push('', `### ${group.title}`);
      if (group.note) out.push('', group.note);
      for (const item of group.names) {
        const from = item.external ? `from the package \`${item.from}\`, re-exported as it is` : `[${item.from}](../${item.from})`;
        out.push('', `${headed ? '####' : '###'} \`${item.name}\``, '', `*${item.kind}* — ${from}`);
        if (item.signature) out.push('', fenced(item.signature));
        if (item.doc) out.push('', item.doc);
        else if (item.external) out.push('', `See [${item.from}](https://www.npmjs.com/package/${item.from})'s own documentation.`);
        const tags = item.tags.filter((t) => t.text || t.name === 'deprecated');
        if (tags.length) out.push('', ...tags.map(tagLine));
        for (const example of item.examples) out.push('', '**Example**', '', fenced(example));
      }
    }
  }
  return `${out.join('\n')}\n`;
}

/** A text's sections by heading path ('`coordkit/plugin` › Errors › `CoordError`'), each with its text. */
function sections(text) {
  const found = new Map();
  const path = [];
  let current = '(the top)';
  found.set(current, '');
  let fence = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fence = !fence;
    const heading = !fence && /^(#{1,4}) (.*)$/.exec(line);
    if (heading) {
      path.length = heading[1].length - 1;
      path[heading[1].length - 1] = heading[2];
      current = path.filter(Boolean).join(' › ');
      found.set(current, '');
    }
    found.set(current, `${found.get(current)}${line}\n`);
  }
  return found;
}

/** What differs between the file and what the generator writes, section by section. */
export function differences(found, wanted) {
  const a = sections(found);
  const b = sections(wanted);
  const diffs = [];
  for (const [name, text] of b) {
    if (!a.has(name)) diffs.push(`missing: ${name}`);
    else if (a.get(name) !== text) diffs.push(`changed: ${name}`);
  }
  for (const name of a.keys()) if (!b.has(name)) diffs.push(`no longer exported: ${name}`);
  return diffs;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const text = renderApi(readApi());
  const file = join(root, API_FILE);
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(file, 'utf8');
    } catch {
      console.error(`${API_FILE} is missing: run node scripts/api-docs.mjs`);
      process.exit(1);
    }
    if (current !== text) {
      console.error(`${API_FILE} is stale (a doc comment or an export changed): run node scripts/api-docs.mjs`);
      for (const line of differences(current, text)) console.error(`  ${line}`);
      process.exit(1);
    }
    console.log(`${API_FILE} is up to date`);
  } else {
    writeFileSync(file, text);
    console.log(`wrote ${API_FILE}`);
  }
}
