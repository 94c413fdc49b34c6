// The node role, for a node in its own process (orchestrator.nodeMode =
// process): the orchestrator starts `coord run --plugin webdriver --role node`
// with node.sessionId and node.orchestratorId set. The process ends with its session.
import process from 'node:process';
import type { Role } from '../../../entries/plugin.ts';
import type { Ctx } from '../context.ts';
import { SessionNode } from '../node/session-node.ts';
import { readTimeouts } from '../session/timeouts.ts';
import { checkEncoder } from '../recording/settings.ts';
import { WebDriverError } from '../errors.ts';

export function nodeRole(ctx: Ctx): Role {
  const { sessionId, orchestratorId } = ctx.config.node;
  let node: SessionNode | undefined;
  return {
    async start() {
      if (!sessionId || !orchestratorId) {
        throw new WebDriverError('the node role serves one session: it needs webdriver.node.sessionId and webdriver.node.orchestratorId (the orchestrator sets them when nodeMode is process)', { code: 'COORD_ERR_WEBDRIVER_NODE_SESSION_MISSING' });
      }
      checkEncoder(ctx.config);
      node = new SessionNode(ctx, { sessionId, orchestratorId, timeouts: await readTimeouts(ctx) });
      // when the session ends, so does this process (through the usual SIGTERM path, so every role stops cleanly)
      void node.finished.then(() => process.kill(process.pid, 'SIGTERM'));
      await node.start();
    },
    async stop(reason) {
      await node?.end('TERM', `node process stopping (${reason})`);
    },
  };
}
