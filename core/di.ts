// Dependency injection: one tsyringe container per process, a child per
// plugin. Values are registered by token (no decorators), so a test swaps
// the clock, logger or backend by passing its own.
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

/** A fresh container for one process (a child of tsyringe's global one, so processes in one test never share values). */
export function processContainer(): DependencyContainer {
  return container.createChildContainer();
}

export type { DependencyContainer };
