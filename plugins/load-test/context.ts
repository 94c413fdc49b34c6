// The role context every load-test role and helper receives: its config, and
// its scripts and channels typed from the Lua headers and the contract.
import type { TypedContext } from '../../entries/plugin.ts';
import type { LoadTestConfig } from './config.ts';
import type { contract } from './contract.ts';
import type { LoadTestScripts } from './scripts.gen.ts';

export type Ctx = TypedContext<LoadTestConfig, typeof contract, LoadTestScripts>;
