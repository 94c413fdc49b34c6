// load-test's errors, each a CoordError with a code of its own
// (docs/errors.md, section load-test). The API answers InputError with 400,
// ForbiddenError with 403 and ConflictError with 409; the CLI prints any of
// them as one line.
import { CoordError, type CoordErrorOptions } from '../../entries/plugin.ts';

/** A value the command line or the API cannot use (a duration, a rate, a count, a body): one line saying what was expected. */
export class InputError extends CoordError {
  override readonly name = 'InputError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_LOAD_TEST_INPUT', options);
  }
}

/** A request the API refuses before handling it (403): its Host, Origin, content type or scenario path. */
export class ForbiddenError extends CoordError {
  override readonly name = 'ForbiddenError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_LOAD_TEST_FORBIDDEN', options);
  }
}

/** A request that does not fit the test's state (a start while one runs, users while idle), or a test another orchestrator changed. */
export class ConflictError extends CoordError {
  override readonly name = 'ConflictError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_LOAD_TEST_CONFLICT', options);
  }
}

/** `coord load start|stop|users|status`: the orchestrator's API cannot be reached, or refused the call. */
export class ApiError extends CoordError {
  override readonly name = 'ApiError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_LOAD_TEST_API', options);
  }
}

/** A scenario's code that does not do what the scenario API expects (a shape's or probe's value, a message on a closed WebSocket), or does not load in the users' thread. */
export class ScenarioError extends CoordError {
  override readonly name = 'ScenarioError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_LOAD_TEST_SCENARIO', options);
  }
}
