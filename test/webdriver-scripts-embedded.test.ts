// The same script cases as webdriver-scripts.test.ts, on the embedded backend
// (Lua 5.4 in WebAssembly), so both are held to one behaviour.
process.env.WD_BACKEND = 'embedded';
await import('./webdriver-scripts.test.ts');
