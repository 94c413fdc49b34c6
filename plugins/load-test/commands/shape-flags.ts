// `coord load run` and `coord load start` with a load shape: --stages and
// --rate-stages are checked here (one line naming the flag), sent to the API
// by load start, and handed to load run as the config values
// load-test.stages / load-test.rateStages (the test's own shape). A load run
// without --duration lasts as long as its shape: its stages' total, or until
// a shape function returns null.
import { type CommandTools, optionText } from '../../../entries/plugin.ts';
import { type LoadTestConfig, PLUGIN_NAME } from '../config.ts';
import { loadScenario } from '../scenario/loader.ts';
import { parseStages, resolveShape, shapeDurationMs } from '../scenario/shape.ts';

/** Longest a shape function may run a `load run` without --duration (it ends it by returning null). */
const SHAPE_FUNCTION_CAP = '24h';

/** The API body's shape fields from the flags. */
export function shapeBody(options: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const stages = optionText(options.stages);
  const rateStages = optionText(options.rateStages);
  if (stages !== undefined) body.stages = (parseStages(stages, '--stages', 'users'), stages);
  if (rateStages !== undefined) body.rateStages = (parseStages(rateStages, '--rate-stages', 'rate'), rateStages);
  return body;
}

/** A config value a shape flag sets (load-test.stages from --stages…), as CommandTools.loadConfig takes it. */
export interface ShapeFlag {
  path: string;
  value: unknown;
  flag: string;
}

/** load run's options with the duration the shape gives, and the shape flags as config values. */
export async function withShape(options: Readonly<Record<string, unknown>>, tools: CommandTools): Promise<{ options: Record<string, unknown>; shapeFlags: ShapeFlag[] }> {
  const body = shapeBody(options);
  const shapeFlags: ShapeFlag[] = [];
  if (body.stages !== undefined) shapeFlags.push({ path: 'load-test.stages', value: body.stages, flag: '--stages' });
  if (body.rateStages !== undefined) shapeFlags.push({ path: 'load-test.rateStages', value: body.rateStages, flag: '--rate-stages' });
  const next: Record<string, unknown> = { ...options };
  const scenarioPath = optionText(options.scenario);
  if (options.duration === undefined && scenarioPath) {
    const config = tools.loadConfig({ after: shapeFlags }).plugins[PLUGIN_NAME] as unknown as LoadTestConfig;
    const shape = resolveShape({}, await loadScenario(scenarioPath), config);
    if (shape) {
      const ms = shapeDurationMs(shape);
      next.duration = ms === undefined ? SHAPE_FUNCTION_CAP : `${Math.max(1, Math.ceil(ms))}ms`;
    }
  }
  return { options: next, shapeFlags };
}
