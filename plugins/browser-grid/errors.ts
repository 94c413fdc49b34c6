// browser-grid's errors. Each condition a user can meet has its own code,
// listed in docs/errors.md ("### browser-grid"): match on `err.code`.
import { CoordError } from '../../entries/plugin.ts';

/** The codes of browser-grid's conditions. */
export type GridErrorCode =
  | 'COORD_ERR_BROWSER_GRID_LAUNCH'
  | 'COORD_ERR_BROWSER_GRID_CDP_LAUNCH'
  | 'COORD_ERR_BROWSER_GRID_NO_CHROMIUM'
  | 'COORD_ERR_BROWSER_GRID_BIDI_LAUNCH'
  | 'COORD_ERR_BROWSER_GRID_NO_FIREFOX'
  | 'COORD_ERR_BROWSER_GRID_PORTS_EXHAUSTED'
  | 'COORD_ERR_BROWSER_GRID_PORT_IN_USE'
  | 'COORD_ERR_BROWSER_GRID_LISTEN'
  | 'COORD_ERR_BROWSER_GRID_WILDCARD_ADDRESS'
  | 'COORD_ERR_BROWSER_GRID_STOPPING'
  | 'COORD_ERR_BROWSER_GRID_PLAYWRIGHT_INSTALL'
  | 'COORD_ERR_BROWSER_GRID_PLAYWRIGHT_VERSION'
  | 'COORD_ERR_BROWSER_GRID_REDIS_TIMEOUT'
  | 'COORD_ERR_BROWSER_GRID_REDIS_UNREACHABLE';

/** Something the grid could not do; `code` says what (COORD_ERR_BROWSER_GRID when no narrower code applies). */
export class GridError extends CoordError {
  override readonly name = 'GridError';
  constructor(message: string, options: { code?: GridErrorCode; cause?: unknown } = {}) {
    super(message, 'COORD_ERR_BROWSER_GRID', options);
  }
}

/** A worker endpoint the proxy could not dial (refused, unreachable, silent). */
export class DialError extends CoordError {
  override readonly name = 'DialError';
  constructor(
    message: string,
    /** The socket error's code ('ECONNREFUSED': nothing listens there any more), when there was one. */
    readonly socketCode?: string,
  ) {
    super(message, 'COORD_ERR_BROWSER_GRID_DIAL');
  }
}
