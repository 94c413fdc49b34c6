// The role context every role and step of __NAME__ receives: its config, and its
// scripts and channels typed from the Lua headers (scripts.gen.ts) and the contract.
import type { TypedContext } from 'coordkit/plugin';
import type { Config } from './config.ts';
import type { contract } from './contract.ts';
import type { Scripts } from './scripts.gen.ts';

export type Ctx = TypedContext<Config, typeof contract, Scripts>;
