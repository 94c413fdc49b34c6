// Where the manager gets the installed-device list: a file, a URL, a user
// function, or the obniz Cloud API. A source returns the whole list each time;
// the manager diffs it against Redis.
import type { Clock, Logger } from '../../../entries/plugin.ts';
import { deviceSourceKind, type ObnizConfig } from '../config.ts';
import type { DeviceList, ReadCheck } from '../device-list.ts';
import type { DeviceInfo } from '../values.ts';
import { cloudSource } from './cloud.ts';
import { fileSource } from './file.ts';
import { moduleSource } from './module.ts';
import { urlSource } from './url.ts';

export interface DeviceSource {
  /** For logs: 'file devices.json', 'obniz Cloud'… */
  readonly description: string;
  /** The whole list now; throws one clear error (DeviceListError or SourceError) when it cannot be read. */
  list(): Promise<DeviceInfo[]>;
  /**
   * The same list as texts, where the source can read it a slice at a time (a JSON file) rather
   * than hold it whole as objects: 1,000,000 devices, 170 MB of JSON, stay within a few hundred MB.
   * `check` (given each id and install's fingerprint) says which devices keep their text (the
   * others' is '') and finds an id listed twice. `onSlice`, awaited after each slice, sees the list so far (the manager
   * assigns the new devices in it while the rest is read, and may blank their texts once sent).
   */
  read?(check?: ReadCheck, onSlice?: (list: DeviceList) => Promise<void>): Promise<DeviceList>;
  /**
   * A version of the list, cheaper than reading it, that changes whenever the list may have
   * (a file's inode, size and mtime): while it and Redis's lists are as last applied, a sync
   * reads nothing more. Sources without one are read every sync and compared by fingerprint.
   */
  version?(): Promise<string>;
  /** Calls onChange when the list may have changed between syncs; returns a function that stops watching. */
  watch?(onChange: () => void): () => void;
}

export interface SourceContext {
  config: ObnizConfig;
  logger: Logger;
  clock: Clock;
}

/** The source the config selects, or undefined (deviceSource none: the list is managed by someone else). */
export function deviceSource(ctx: SourceContext): DeviceSource | undefined {
  const kind = deviceSourceKind(ctx.config);
  const devices = ctx.config.devices!;
  switch (kind) {
    case 'file':
      return fileSource(devices, ctx);
    case 'url':
      return urlSource(devices, ctx);
    case 'module':
      return moduleSource(devices);
    case 'cloud':
      return cloudSource(ctx);
    case 'none':
      return undefined;
  }
}
