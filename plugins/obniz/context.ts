// The role context every obniz role and helper receives: its config, and its
// scripts and channels typed from the Lua headers and the contract.
import type { TypedContext } from '../../entries/plugin.ts';
import type { ObnizConfig } from './config.ts';
import type { contract } from './contract.ts';
import type { ObnizScripts } from './scripts.gen.ts';

export type Ctx = TypedContext<ObnizConfig, typeof contract, ObnizScripts>;
