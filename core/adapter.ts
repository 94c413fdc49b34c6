// coordkit's entry for adapter authors (a backend on another Redis client):
// `import type { Backend, BackendFactory } from 'coordkit/adapter'`. The
// interface a backend implements, the errors it raises, the URL parser the
// built-in adapters share. Hold it to coord's semantics with adapterSuite
// from 'coordkit/conformance'.
export type {
  Arg,
  Backend,
  BackendCapabilities,
  BackendFactory,
  BackendOptions,
  BackendState,
  BlockingConnection,
  Command,
  PubSubMessage,
  Reply,
  ScriptSource,
  Subscriber,
} from './backend.ts';
export { ConnectionError, ReplyError } from './backend.ts';
export type { HostPort, ParsedUrl } from './url.ts';
export { mask, parseRedisUrl, UrlError } from './url.ts';
