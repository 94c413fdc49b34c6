// coord's own version, read from its package.json in this one place (the
// plugin check compares each plugin's `coord` range against it).
import { readFileSync } from 'node:fs';
import { findUp } from './paths.ts';

/**
 * coord's version, e.g. '0.1.0': what a plugin's `coord` range is checked
 * against when it registers.
 *
 * @example
 * console.log(`my-app on coord ${coordVersion}`);
 */
export const coordVersion: string = (JSON.parse(readFileSync(findUp(import.meta.url, 'package.json'), 'utf8')) as { version: string }).version;
