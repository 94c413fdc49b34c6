// A device list in a JSON or YAML file, re-read when it changes (polled by
// stat every watchInterval, which also sees editors that replace the file).
import { readFile } from 'node:fs/promises';
import { unwatchFile, watchFile } from 'node:fs';
import { resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { DeviceListError, normalizeDevices } from '../devices.ts';
import type { DeviceSource, SourceContext } from './source.ts';

export function fileSource(path: string, ctx: SourceContext): DeviceSource {
  const full = resolve(path);
  return {
    description: `file ${path}`,
    async list() {
      let text: string;
      try {
        text = await readFile(full, 'utf8');
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        throw new DeviceListError(`devices file ${path}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (err as Error).message}`);
      }
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
    throw new DeviceListError(`${where}${pos ? `:${pos.line}:${pos.col}` : ''}: cannot parse: ${error.message.split(' at line ')[0]!.split('\n')[0]}`);
  }
  return doc.toJS();
}
