// `node bench/X.mjs --help`: a bench's opening comment is its help. Printed,
// and the process ends, when the command line asks for it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** With --help or -h on the command line: prints the opening comment of the module at `moduleUrl` and exits 0. */
export function exitWithHelpIfAsked(moduleUrl) {
  if (!process.argv.includes('--help') && !process.argv.includes('-h')) return;
  const head = readFileSync(fileURLToPath(moduleUrl), 'utf8').split('\nimport ')[0];
  process.stdout.write(`${head.replace(/^\/\/ ?/gm, '')}\n`);
  process.exit(0);
}
