// The orchestrator role: owns the test lifecycle (test-control.ts) and, unless
// told otherwise, serves the HTTP API and the live page (api.ts) on
// 127.0.0.1 — an orchestrator anyone can reach is a traffic cannon.
import type { Server } from 'node:http';
import type { Role } from '../../../core/plugin.ts';
import { serveApi } from '../api.ts';
import { TestController } from '../test-control.ts';
import type { Ctx } from '../context.ts';

/** Controllers by their process's signal: `coord load run` and tests drive the one they started. */
const controllers = new WeakMap<AbortSignal, TestController>();

export function controllerOf(signal: AbortSignal): TestController | undefined {
  return controllers.get(signal);
}

let latest: TestController | undefined;

/** The controller this process started last (`coord load run` reads its verdict after the run). */
export function latestController(): TestController | undefined {
  return latest;
}

export function orchestratorRole(ctx: Ctx): Role {
  const controller = new TestController(ctx);
  latest = controller;
  let server: Server | undefined;
  return {
    async start() {
      await controller.open();
      controllers.set(ctx.signal, controller);
      if (ctx.config.api) {
        server = await serveApi(ctx, controller);
        const address = server.address();
        const port = typeof address === 'object' && address ? address.port : ctx.config.port;
        ctx.logger.info('load test API and page', { url: `http://${ctx.config.host}:${port}/`, token: ctx.config.token ? 'required' : 'none' });
      }
    },
    async stop(reason) {
      await controller.close(reason);
      if (server) await new Promise<void>((resolve) => server!.close(() => resolve()));
      server?.closeAllConnections();
    },
  };
}
