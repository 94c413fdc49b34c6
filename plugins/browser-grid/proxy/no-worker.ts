// What a client asking for a browser no worker serves is told, on a WebSocket
// or on POST /v1/sessions: what the grid does serve (workers per browser type,
// from the worker indexes) and what the browser it asked for would need.
import type { Protocol } from '../admission/admission.ts';
import type { Ctx } from '../context.ts';
import { browserTypes, type BrowserType } from '../refs.ts';

export async function noWorkerAnswer(ctx: Ctx, protocol: Protocol, browserType: BrowserType): Promise<{ message: string; served: Record<string, number> }> {
  const counts = (await ctx.backend.pipeline(browserTypes.map((type) => ['ZCARD', ctx.keys.workerIndex({ browserType: type })])).catch(() => [])) as number[];
  const served: Record<string, number> = Object.fromEntries(browserTypes.flatMap((type, i) => (counts[i] ? [[type, counts[i]]] : [])));
  const servedText = Object.keys(served).length
    ? `It serves ${Object.entries(served).map(([type, n]) => `${type} (${n} worker${n === 1 ? '' : 's'})`).join(', ')}.`
    : 'No worker of any browser is registered.';
  const what = protocol === 'cdp' ? 'Chromium worker serving CDP (browser-grid.cdp)' : protocol === 'bidi' ? 'Firefox worker serving WebDriver BiDi (browser-grid.bidi)' : `${browserType} worker`;
  return { message: `No available servers: no ${what} is registered in the grid. ${servedText} ${needs(protocol, browserType)}`, served };
}

function needs(protocol: Protocol, browserType: BrowserType): string {
  if (protocol === 'cdp') return 'A CDP client needs a worker started with browser-grid.cdp=true.';
  if (protocol === 'bidi') return "A WebDriver BiDi client needs a worker started with browser-grid.bidi=true on a host with Firefox (Debian's firefox-esr).";
  if (browserType === 'chromium') return 'A chromium worker is a coord run --plugin browser-grid --role worker process.';
  const engine = browserType === 'firefox' ? 'Firefox' : 'WebKit';
  const bidi = browserType === 'firefox' ? " A system Firefox serves WebDriver BiDi clients (Puppeteer's) on /bidi?browser=firefox, on a grid with browser-grid.bidi=true." : '';
  return `A ${browserType} worker is a worker process started with browser-grid.browserTypes including ${browserType}, on a host with Playwright's own ${engine} build (npx playwright install ${browserType}): Playwright drives ${engine} only through its own build, not a system ${browserType === 'firefox' ? 'Firefox' : 'WebKitGTK'}.${bidi}`;
}
