// A device list in a JSON or YAML file, re-read when it changes (polled by
// stat every watchInterval, which also sees editors that replace the file).
import { readFile, stat } from 'node:fs/promises';
import { unwatchFile, watchFile } from 'node:fs';
import { resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { normalizeDevices } from '../devices.ts';
import { DeviceListError } from '../errors.ts';
import type { DeviceInfo } from '../values.ts';
import type { DeviceSource, SourceContext } from './source.ts';

export function fileSource(path: string, ctx: SourceContext): DeviceSource {
  const full = resolve(path);
  const fail = (err: unknown): never => {
    const code = (err as NodeJS.ErrnoException).code;
    throw new DeviceListError(`devices file ${path}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (err as Error).message}`, {
      code: 'COORD_ERR_OBNIZ_DEVICE_LIST_FILE',
    });
  };
  return {
    description: `file ${path}`,
    // the manager does not read a file whose version is as last applied (the parsed list is not kept:
    // 1,000,000 devices are several hundred MB of objects)
    async version() {
      const info = await stat(full).catch(fail);
      return `${info.ino}:${info.size}:${info.mtimeMs}`;
    },
    async list(): Promise<DeviceInfo[]> {
      const text = await readFile(full, 'utf8').catch(fail);
      return normalizeDevices(parseText(text, `devices file ${path}`), `devices file ${path}`);
    },
    watch(onChange) {
      const listener = (now: { mtimeMs: number; size: number; ino: number }, before: { mtimeMs: number; size: number; ino: number }) => {
        if (now.mtimeMs !== before.mtimeMs || now.size !== before.size || now.ino !== before.ino) onChange();
      };
      watchFile(full, { interval: Math.max(50, ctx.config.watchInterval * 1000), persistent: false }, listener);
      return () => unwatchFile(full, listener);
    },
  };
}

/**
 * JSON or YAML text, with line:column in errors. JSON goes through JSON.parse
 * (the YAML parser reads it too, but 70× slower on a 10,000-device list).
 */
export function parseText(text: string, where: string): unknown {
  if (/^\s*[[{]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      // YAML flow style, or broken JSON: the YAML parser says where
    }
  }
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const error = doc.errors[0];
  if (error) {
    const pos = error.linePos?.[0];
    throw new DeviceListError(`${where}${pos ? `:${pos.line}:${pos.col}` : ''}: cannot parse: ${error.message.split(' at line ')[0]!.split('\n')[0]}`, {
      code: 'COORD_ERR_OBNIZ_DEVICE_LIST_PARSE',
    });
  }
  return doc.toJS();
}
