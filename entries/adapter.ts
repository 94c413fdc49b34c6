// coordkit's entry for adapter authors (a backend on another Redis client):
// `import type { BackendFactory, BackendOptions } from 'coordkit/adapter'`.
// What a backend implements beyond the Backend interface 'coordkit' exports
// (with BlockingConnection, Command, and ReplyError and ConnectionError, the
// errors it raises: the plugin kit has them, as roles use them), and the URL
// parser the built-in adapters share. Hold it to coord's semantics with
// adapterSuite from 'coordkit/conformance'.
export type {
  BackendCapabilities,
  BackendFactory,
  BackendOptions,
  BackendState,
  ScriptSource,
} from '../core/backend.ts';
export type { HostPort, ParsedUrl } from '../core/url.ts';
export { mask, parseRedisUrl } from '../core/url.ts';
