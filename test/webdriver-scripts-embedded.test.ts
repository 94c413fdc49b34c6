// The same script cases as webdriver-scripts.test.ts, on the embedded backend
// (Lua 5.3 via fengari with 32-bit integers), so both are held to one behaviour.
process.env.WD_BACKEND = 'embedded';
await import('./webdriver-scripts.test.ts');
