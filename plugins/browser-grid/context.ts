// The role context every browser-grid role and helper receives: its config,
// and its scripts and channels typed from the Lua headers and the contract.
import type { TypedContext } from '../../entries/plugin.ts';
import type { BrowserGridConfig } from './config.ts';
import type { contract } from './contract.ts';
import type { BrowserGridScripts } from './scripts.gen.ts';

export type Ctx = TypedContext<BrowserGridConfig, typeof contract, BrowserGridScripts>;
