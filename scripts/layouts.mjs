// Writes docs/layouts/<plugin>.md: the Redis layout each built-in plugin
// implements, named after the system that documents it, with the key table
// made from the plugin's contract (the same reference `coord schema` prints).
// Run after a build when a contract changes: node scripts/layouts.mjs
// (test/layouts.test.ts fails while a page is out of date).
import { writeFileSync } from 'node:fs';
import { layoutPages } from '../dist/scripts/layout-pages.js';

for (const [file, text] of await layoutPages()) writeFileSync(new URL(`../${file}`, import.meta.url), text);
