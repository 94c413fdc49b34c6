// The same script cases as obniz-scripts.test.ts, on the embedded backend
// (Lua 5.4 in WebAssembly with the prelude's cjson), so both are held to one behaviour.
process.env.OBNIZ_BACKEND = 'embedded';
await import('./obniz-scripts.test.ts');
