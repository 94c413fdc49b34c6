// The same script cases as obniz-scripts.test.ts, on the embedded backend
// (Lua 5.3 with 32-bit integers and the prelude's cjson), so both are held to one behaviour.
process.env.OBNIZ_BACKEND = 'embedded';
await import('./obniz-scripts.test.ts');
