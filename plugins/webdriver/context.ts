// The role context every webdriver role and helper receives.
import type { RoleContext } from '../../core/plugin.ts';
import type { WebDriverConfig } from './config.ts';
import type { WebDriverKeys } from './contract.ts';

export type Ctx = RoleContext<WebDriverConfig, WebDriverKeys>;

/** Entries kept per session log stream (the contract's maxLength). */
export const LOG_MAX_LENGTH = 1000;

/** TTL of manager:{id}:host (WebGrid: EX 120 s); a manager silent this long is gone. */
export const MANAGER_HOST_TTL = 120;
