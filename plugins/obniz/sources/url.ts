// A device list served over HTTP(S) as JSON or YAML, fetched at every sync.
import { normalizeDevices } from '../devices.ts';
import { parseText } from './file.ts';
import { SourceError } from '../errors.ts';
import type { DeviceSource, SourceContext } from './source.ts';

const TIMEOUT_MS = 30_000;

export function urlSource(url: string, ctx: SourceContext): DeviceSource {
  const shown = url.replace(/\/\/[^/@]*@/, '//***@');
  return {
    description: `URL ${shown}`,
    async list() {
      let response: Response;
      try {
        response = await fetch(url, { headers: { accept: 'application/json, application/yaml;q=0.9', ...ctx.config.devicesHeaders }, signal: AbortSignal.timeout(TIMEOUT_MS) });
      } catch (err) {
        throw new SourceError(`devices URL ${shown}: cannot fetch: ${causeOf(err)}`);
      }
      if (!response.ok) throw new SourceError(`devices URL ${shown}: HTTP ${response.status} ${response.statusText}`.trim());
      return normalizeDevices(parseText(await response.text(), `devices URL ${shown}`), `devices URL ${shown}`);
    },
  };
}

export function causeOf(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return `no answer within ${TIMEOUT_MS / 1000} s`;
  return e.cause?.code ?? e.cause?.message ?? e.message ?? String(err);
}
