// coord's public API: everything a plugin author, an adapter author or an
// embedding application needs. `import { … } from 'coordkit'`.
export * from './backend.ts';
export * from './clock.ts';
export * from './config.ts';
export * from './contract.ts';
export * from './contract-check.ts';
export * from './contract-doc.ts';
export * from './log.ts';
export * from './logger.ts';
export * from './option-values.ts';
export * from './paths.ts';
export * from './plugin.ts';
export * from './role-context.ts';
export * from './runtime.ts';
export * from './scripts.ts';
export * from './snapshot.ts';
export * from './url.ts';
export { coordVersion } from './version.ts';
export { tokens } from './di.ts';
export { adapterNames, createBackend, type AdapterName } from '../adapters/index.ts';
