// The orchestrator role: owns the test lifecycle (run-lifecycle/) and, unless
// told otherwise, serves the HTTP API and the live page (api/server.ts) on
// 127.0.0.1 — an orchestrator anyone can reach is a traffic cannon.
import type { Server } from 'node:http';
import type { Role } from '../../../entries/plugin.ts';
import { serveApi } from '../api/server.ts';
import { TestController } from '../run-lifecycle/controller.ts';
import type { Ctx } from '../context.ts';

/** The orchestrator as its process's handle shows it (handle.role('load-test', 'orchestrator')): `coord load run` and tests drive its controller. */
export interface OrchestratorRole extends Role {
  readonly controller: TestController;
}

export function orchestratorRole(ctx: Ctx): OrchestratorRole {
  const controller = new TestController(ctx);
  let server: Server | undefined;
  return {
    controller,
    async start() {
      await controller.open();
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
