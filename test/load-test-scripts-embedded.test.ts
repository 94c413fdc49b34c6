// The same script cases as load-test-scripts.test.ts on the embedded backend
// (Lua 5.3 via fengari: 32-bit integers, its own cjson), held to one behaviour.
process.env.LOAD_BACKEND = 'embedded';
await import('./load-test-scripts.test.ts');
