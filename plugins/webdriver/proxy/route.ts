// Where the proxy sends a request: a manager, or a session's node.
import { originOf } from '../http/hop.ts';

export interface Route {
  host: string;
  port: number;
  /** http://host:port, built once per route rather than per request. */
  origin: string;
  /** The node's key (session:{id}:upstream), sent with every request to it; '' for managers. */
  key: string;
}

export function route(host: string, port: number, key = ''): Route {
  return { host, port, origin: originOf({ host, port }), key };
}
