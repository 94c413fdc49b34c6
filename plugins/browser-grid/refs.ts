// A worker's ref is '{browserType}:{workerId}': its field name in the counter
// hashes and its member in the indexes (playwright-distributed's field format).

export type BrowserType = 'chromium' | 'firefox' | 'webkit';
export const browserTypes: readonly BrowserType[] = ['chromium', 'firefox', 'webkit'];

export const workerRef = (browserType: string, workerId: string): string => `${browserType}:${workerId}`;

export function parseRef(ref: string): { browserType: BrowserType; workerId: string } {
  const at = ref.indexOf(':');
  return { browserType: ref.slice(0, at) as BrowserType, workerId: ref.slice(at + 1) };
}

/** The Playwright major.minor a client announces in its User-Agent ('Playwright/1.62.1 (…)'), or '' when it names none. */
export function clientVersion(userAgent: string | undefined): string {
  const m = /^Playwright\/(\d+)\.(\d+)\./.exec(userAgent ?? '');
  return m ? `${m[1]}.${m[2]}` : '';
}

/** major.minor of a version string ('1.62.1' → '1.62'), or '' when it has none. */
export function majorMinor(version: string | undefined): string {
  const m = /^v?(\d+)\.(\d+)/.exec(version ?? '');
  return m ? `${m[1]}.${m[2]}` : '';
}

/** lastHeartbeat in ms, whether it was written in seconds (playwright-distributed's documented layout) or ms (playwright-distributed). */
export function heartbeatMs(value: string | number | null | undefined): number | undefined {
  const n = Number(value);
  if (value === null || value === undefined || value === '' || !Number.isFinite(n)) return undefined;
  return n < 100_000_000_000 ? n * 1000 : n;
}
