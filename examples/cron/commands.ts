// `coord cron status`: every job with its last tick and how its runs ended,
// plus what is queued and running, read straight from Redis.
import type { CommandTools, PluginCommand } from 'coordkit/plugin';
import type { CronContext } from './context.ts';

export interface JobStatus {
  id: string;
  every: number;
  command: string;
  lastTick: number | null;
  runs: number;
  failed: number;
  lost: number;
  skipped: number;
  lastStatus: string | null;
  lastRunner: string | null;
}

export interface CronStatus {
  jobs: JobStatus[];
  due: number;
  running: number;
}

export async function cronStatus(ctx: CronContext): Promise<CronStatus> {
  const ids = ((await ctx.backend.send(['SMEMBERS', ctx.keys.jobs()])) as string[]).sort();
  const jobs: JobStatus[] = [];
  for (const id of ids) {
    const flat = (await ctx.backend.send(['HGETALL', ctx.keys.job({ jobId: id })])) as string[];
    const h: Record<string, string> = {};
    for (let i = 0; i < flat.length; i += 2) h[flat[i]!] = flat[i + 1]!;
    const count = (name: string) => Number(h[name] ?? 0);
    jobs.push({
      id,
      every: count('every'),
      command: h.command ?? '',
      lastTick: h.lastTick === undefined ? null : Number(h.lastTick),
      runs: count('runs'),
      failed: count('failed'),
      lost: count('lost'),
      skipped: count('skipped'),
      lastStatus: h.lastStatus ?? null,
      lastRunner: h.lastRunner ?? null,
    });
  }
  const due = (await ctx.backend.send(['LLEN', ctx.keys.due()])) as number;
  const running = (await ctx.backend.send(['ZCARD', ctx.keys.running()])) as number;
  return { jobs, due, running };
}

export const commands: PluginCommand[] = [
  {
    name: 'cron status',
    description: 'Jobs with their last tick and how their runs ended; ticks queued and running',
    options: [{ flags: '--json', description: 'Print JSON instead of a table' }],
    async run(options, _args, tools: CommandTools) {
      const ctx = (await tools.connect()) as unknown as CronContext & { close(): Promise<void> };
      try {
        const status = await cronStatus(ctx);
        tools.print(options.json ? JSON.stringify(status, null, 2) : statusTable(status));
      } finally {
        await ctx.close();
      }
    },
  },
];

function statusTable(status: CronStatus): string {
  if (!status.jobs.length) return 'no jobs defined (is a scheduler running with jobs in its config?)';
  const head = ['job', 'every', 'last tick', 'runs', 'failed', 'lost', 'skipped', 'last', 'runner'];
  const rows = status.jobs.map((j) => [
    j.id,
    `${j.every}s`,
    j.lastTick === null ? '-' : new Date(j.lastTick * 1000).toISOString(),
    String(j.runs),
    String(j.failed),
    String(j.lost),
    String(j.skipped),
    j.lastStatus ?? '-',
    j.lastRunner ?? '-',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line), '', `${status.due} queued, ${status.running} running`].join('\n');
}
