// cron: a distributed cron. Schedulers queue each job's ticks (each tick
// once, however many schedulers run), runners claim them under a lease (each
// tick runs on one runner) and record how every run ended.
//   coord run --plugin ./examples/cron --config cron.yaml
import type { Plugin } from 'coordkit/plugin';
import { commands } from './commands.ts';
import { checkJobs, configEnv, configSchema, type CronConfig } from './config.ts';
import { contract, type CronKeys } from './contract.ts';
import { runnerRole } from './roles/runner.ts';
import { schedulerRole } from './roles/scheduler.ts';
import { scenarios } from './scenarios.ts';

const plugin: Plugin<CronConfig, CronKeys> = {
  name: 'cron',
  version: '1.0.0',
  coord: '^0.1.0',
  description: 'A distributed cron: each job runs once per tick across any number of processes',
  contract,
  scripts: new URL('./lua/', import.meta.url),
  config: { schema: configSchema, env: configEnv, check: checkJobs },
  roles: { scheduler: schedulerRole, runner: runnerRole },
  scenarios,
  commands,
};

export default plugin;
