// The same script cases as browser-grid-scripts.test.ts, on the embedded backend
// (Lua 5.4 in WebAssembly, not Redis's 5.1), so both are held to one behaviour.
process.env.GRID_BACKEND = 'embedded';
await import('./browser-grid-scripts.test.ts');
