// Dependency injection: one tsyringe container per process, a child per
// plugin. Values are registered by token (no decorators). An application or
// a test registers its own clock, logger or backend in a container it passes
// to startProcess (or, for one plugin only, in that plugin's child through
// configurePlugin); the runtime fills in the rest.
import 'reflect-metadata'; // tsyringe needs the Reflect metadata API before it loads
import { container, type DependencyContainer } from 'tsyringe';

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
 */
export function processContainer(parent: DependencyContainer = container): DependencyContainer {
  return parent.createChildContainer();
}

export type { DependencyContainer };
