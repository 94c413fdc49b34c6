// The role context every webdriver role and helper receives: its config, and
// its scripts and channels typed from the Lua headers and the contract.
import type { TypedContext } from '../../entries/plugin.ts';
import type { WebDriverConfig } from './config.ts';
import type { contract } from './contract.ts';
import type { WebDriverScripts } from './scripts.gen.ts';

export type Ctx = TypedContext<WebDriverConfig, typeof contract, WebDriverScripts>;

/** Entries kept per session log stream (the contract's maxLength). */
export const LOG_MAX_LENGTH = 1000;

/** TTL of manager:{id}:host (WebGrid: EX 120 s); a manager silent this long is gone. */
export const MANAGER_HOST_TTL = 120;
