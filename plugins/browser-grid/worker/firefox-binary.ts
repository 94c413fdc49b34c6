// The Firefox a BiDi worker runs for its clients (browser-grid.bidi): the
// configured firefoxBinary, else Debian's firefox-esr, else firefox, on PATH.
import { findExecutable } from '../../../entries/plugin.ts';
import { GridError } from '../errors.ts';

/** The Firefox binary's path; throws one line naming the option when there is none. */
export function firefoxBinary(configured: string | undefined): string {
  if (configured) {
    const found = findExecutable(configured);
    if (found) return found;
    const where = configured.includes('/') ? `at ${configured}` : `named "${configured}" on PATH`;
    throw new GridError(`browser-grid.firefoxBinary: there is no executable ${where}; expected the path of a Firefox binary, or its name on PATH (browser-grid.bidi is on)`, { code: 'COORD_ERR_BROWSER_GRID_NO_FIREFOX' });
  }
  const found = findExecutable('firefox-esr') ?? findExecutable('firefox');
  if (found) return found;
  throw new GridError('browser-grid.bidi is on but there is no firefox-esr or firefox on PATH: install Debian\'s firefox-esr package, or set browser-grid.firefoxBinary to a Firefox binary', { code: 'COORD_ERR_BROWSER_GRID_NO_FIREFOX' });
}
