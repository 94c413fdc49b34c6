// What the proxy role's parts share, made once by roles/proxy.ts.
import type { Socket } from 'node:net';
import type { ApiKeys } from '../../../entries/plugin.ts';
import type { Admission } from '../admission/admission.ts';
import type { Ctx } from '../context.ts';
import type { ForeignWorkers } from '../foreign/foreign-workers.ts';
import type { AdmissionLine } from './admission-line.ts';
import type { Leases } from './leases.ts';
import type { ProxyMetrics } from './metrics.ts';
import type { ApiSessions } from './session-api.ts';

/** Whether this proxy can reach Redis; `downSince` (ms) is when it last found it could not. */
export interface RedisHealth {
  up: boolean;
  downSince: number;
}

export interface ProxyParts {
  ctx: Ctx;
  proxyId: string;
  admission: Admission;
  /** Where clients wait for their first admission call, so churned ones leave before it. */
  line: AdmissionLine;
  leases: Leases;
  metrics: ProxyMetrics;
  foreign: ForeignWorkers;
  redis: Readonly<RedisHealth>;
  /** The grid's API keys as of this proxy's last heartbeat. */
  apiKeys: ApiKeys;
  /** Sessions created with POST /v1/sessions that this proxy holds or relays. */
  apiSessions: ApiSessions;
  /** The relays running now: a stop waits for them, up to drainTimeout. */
  relays: Set<Promise<void>>;
  /** Every upgraded client socket: a stop past drainTimeout closes them. */
  sockets: Set<Socket>;
}
