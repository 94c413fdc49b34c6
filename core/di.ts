// Dependency injection: one tsyringe container per process, a child per
// plugin. Values are registered by token (no decorators). An application or
// a test registers its own clock, logger or backend in a container it passes
// to startProcess (or, for one plugin only, in that plugin's child through
// configurePlugin); the runtime fills in the rest.
import 'reflect-metadata'; // tsyringe needs the Reflect metadata API before it loads
import { container, type DependencyContainer } from 'tsyringe';

/**
 * The names under which a container holds what roles get: the clock, the
 * logger and the backend (register your own in the container you pass to
 * startProcess), and what the runtime registers itself (the config, and in
 * each plugin's child container the plugin, its scripts and its section).
 *
 * @example
 * const app = processContainer();
 * app.register(tokens.Clock, { useValue: fixedClock });
 * app.register(tokens.Backend, { useValue: backend }); // yours: stop leaves it open
 * const handle = await startProcess({ plugins: [plugin], config, container: app });
 * handle.container.resolve(tokens.Config); // the config the process runs with
 */
export const tokens = {
  Clock: Symbol('coord.Clock'),
  Logger: Symbol('coord.Logger'),
  Backend: Symbol('coord.Backend'),
  /** The whole frozen config (CoordConfig). */
  Config: Symbol('coord.Config'),
  /** In a plugin's child container: the plugin, its parsed scripts and its config section. */
  Plugin: Symbol('coord.Plugin'),
  Scripts: Symbol('coord.Scripts'),
  PluginConfig: Symbol('coord.PluginConfig'),
} as const;

/**
 * A fresh container for one process: a child of `parent` (default: tsyringe's
 * global one), so it sees the parent's registrations and its own never leak
 * into the parent or into other processes.
 *
 * @example
 * const app = processContainer();
 * app.register(tokens.Logger, { useValue: memoryLogger() });
 * await startProcess({ plugins: [plugin], config, container: app });
 */
export function processContainer(parent: DependencyContainer = container): DependencyContainer {
  return parent.createChildContainer();
}

export type { DependencyContainer };
