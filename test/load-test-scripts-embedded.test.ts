// The same script cases as load-test-scripts.test.ts on the embedded backend
// (Lua 5.4 in WebAssembly, its own cjson), held to one behaviour.
process.env.LOAD_BACKEND = 'embedded';
await import('./load-test-scripts.test.ts');
