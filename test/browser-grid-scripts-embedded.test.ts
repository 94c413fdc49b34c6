// The same script cases as browser-grid-scripts.test.ts, on the embedded backend
// (its Lua differs from Redis's: 32-bit integers, no cjson), so both are held to one behaviour.
process.env.GRID_BACKEND = 'embedded';
await import('./browser-grid-scripts.test.ts');
