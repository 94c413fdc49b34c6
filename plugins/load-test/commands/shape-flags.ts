// `coord load run` and `coord load start` with a load shape: --stages and
// --rate-stages are checked here (one line naming the flag), sent to the API
// by load start, and handed to load run as the config values
// load-test.stages / load-test.rateStages (the test's own shape). A load run
// without --duration lasts as long as its shape: its stages' total, or until
// a shape function returns null.
import { loadConfig, type ConfigFlag } from '../../../core/config.ts';
import { text } from '../../../core/option-values.ts';
import type { CommandTools } from '../../../core/plugin.ts';
import type { LoadTestConfig } from '../config.ts';
import plugin from '../index.ts';
import { loadScenario } from '../scenario/loader.ts';
import { parseStages, resolveShape, shapeDurationMs } from '../scenario/shape.ts';

/** Longest a shape function may run a `load run` without --duration (it ends it by returning null). */
const SHAPE_FUNCTION_CAP = '24h';

/** The API body's shape fields from the flags. */
export function shapeBody(options: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const stages = text(options.stages);
  const rateStages = text(options.rateStages);
  if (stages !== undefined) body.stages = (parseStages(stages, '--stages', 'users'), stages);
  if (rateStages !== undefined) body.rateStages = (parseStages(rateStages, '--rate-stages', 'rate'), rateStages);
  return body;
}

/** load run's options and tools with the shape flags as config values and the duration the shape gives. */
export async function withShape(options: Readonly<Record<string, unknown>>, tools: CommandTools): Promise<[Record<string, unknown>, CommandTools]> {
  const body = shapeBody(options);
  const flags: ConfigFlag[] = [];
  if (body.stages !== undefined) flags.push({ path: 'load-test.stages', value: body.stages, flag: '--stages' });
  if (body.rateStages !== undefined) flags.push({ path: 'load-test.rateStages', value: body.rateStages, flag: '--rate-stages' });
  const configInput = { ...tools.configInput, flags: [...(tools.configInput.flags ?? []), ...flags] };
  const next: Record<string, unknown> = { ...options };
  const scenarioPath = text(options.scenario);
  if (options.duration === undefined && scenarioPath) {
    const config = loadConfig({ ...configInput, plugins: [plugin] }).plugins['load-test'] as unknown as LoadTestConfig;
    const shape = resolveShape({}, await loadScenario(scenarioPath), config);
    if (shape) {
      const ms = shapeDurationMs(shape);
      next.duration = ms === undefined ? SHAPE_FUNCTION_CAP : `${Math.max(1, Math.ceil(ms))}ms`;
    }
  }
  return [next, { ...tools, configInput, connect: tools.connect, print: tools.print }];
}
