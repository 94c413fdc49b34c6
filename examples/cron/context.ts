// The role context every cron role and step receives: its config, and its
// scripts and channels typed from the Lua headers (scripts.gen.ts) and the contract.
import type { TypedContext } from 'coordkit/plugin';
import type { CronConfig } from './config.ts';
import type { contract } from './contract.ts';
import type { CronScripts } from './scripts.gen.ts';

export type CronContext = TypedContext<CronConfig, typeof contract, CronScripts>;
