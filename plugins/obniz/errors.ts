// The errors the obniz plugin throws of its own, each a CoordError with a
// stable code (docs/errors.md, section "obniz", lists every one): match on
// `err.code`. A worker, device-list or device-class module that does not load
// is coord's ModuleLoadError; a config that cannot be used, coord's ConfigError.
import { CoordError, type CoordErrorCode, type CoordErrorOptions } from '../../entries/plugin.ts';

/**
 * A device list that is not one (a file, a URL's body, a function's result, a
 * webhook event): one line saying where (`devices file d.json: [3].id`), what
 * is wrong and what was expected.
 */
export class DeviceListError extends CoordError {
  override readonly name = 'DeviceListError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_OBNIZ_DEVICE_LIST', options);
  }
}

/** A device list that could not be read: network, HTTP status, the obniz Cloud API, a list function that threw. */
export class SourceError extends CoordError {
  override readonly name = 'SourceError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_OBNIZ_SOURCE', options);
  }
}

/** app.request / directRequest (and `coord obniz request`) that got no answer: no slave alive, device not installed, no answer in time. */
export class RequestError extends CoordError {
  override readonly name = 'RequestError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_OBNIZ_REQUEST', options);
  }
}

/** obniz-app-sdk's error codes (its Lua errors, NO_WORKER of its doAllRelocate, NO_RUNNING_WORKER of its update). */
export type ObnizErrorCode =
  | 'NO_ACCEPTABLE_WORKER'
  | 'NO_RUNNING_WORKER'
  | 'ALREADY_INSTALLED'
  | 'NOT_INSTALLED'
  | 'NO_NEED_TO_RELOCATE'
  | 'NO_OTHER_ACCEPTABLE_WORKER'
  | 'NO_WORKER';

/** coord's code for each obniz-app-sdk code a relocation can fail with. */
const RELOCATE_CODES: Partial<Record<ObnizErrorCode, CoordErrorCode>> = {
  NO_ACCEPTABLE_WORKER: 'COORD_ERR_OBNIZ_NO_ACCEPTABLE_WORKER',
  NOT_INSTALLED: 'COORD_ERR_OBNIZ_NOT_INSTALLED',
  NO_NEED_TO_RELOCATE: 'COORD_ERR_OBNIZ_NO_NEED_TO_RELOCATE',
  NO_OTHER_ACCEPTABLE_WORKER: 'COORD_ERR_OBNIZ_NO_OTHER_ACCEPTABLE_WORKER',
  NO_WORKER: 'COORD_ERR_OBNIZ_NO_WORKER',
};

/**
 * A relocation obniz-app-sdk would refuse, with its code: `sdkCode` is the
 * SDK's (NO_NEED_TO_RELOCATE…), also in the message; `code` is coord's.
 */
export class ObnizScriptError extends CoordError {
  override readonly name = 'ObnizScriptError';
  /** `hint` follows the code in the message: what it means here, what to do. */
  constructor(readonly sdkCode: ObnizErrorCode, what: string, hint?: string) {
    super(`${what}: ${sdkCode}${hint ? `: ${hint}` : ''}`, 'COORD_ERR_OBNIZ_SCRIPT', { code: RELOCATE_CODES[sdkCode] });
  }
}

/** A process that cannot take its place: its instance name is taken, its webhook port cannot be listened on, asked before it started. */
export class InstanceError extends CoordError {
  override readonly name = 'InstanceError';
  constructor(message: string, options?: CoordErrorOptions) {
    super(message, 'COORD_ERR_OBNIZ_INSTANCE', options);
  }
}
