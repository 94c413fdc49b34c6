// Where a load generator's CPU goes, from the profiles bench/load-profile.mjs
// writes (PROFILE=…): the samples' self time grouped by what ran it (undici,
// coord's load-test files by file, autocannon, hdr-histogram, Node's own
// modules, native calls by name, GC), in µs per request (the profile's
// `requests`: what the server counted). Idle time is left out.
//   node bench/load-profile-summary.mjs /tmp/coord-coord-2.cpuprofile [...]
// The V8 profiler samples on a wall clock: on a loaded machine a sample taken
// while the process waited to be scheduled lands on whatever was running, most
// often a socket write (a syscall that wakes the server), so read the native
// write's share as an upper bound and the JavaScript parts as the reliable ones.
import { readFileSync } from 'node:fs';
for (const file of process.argv.slice(2)) {
const p = JSON.parse(readFileSync(file, "utf8"));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map(); for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const dt = new Map();
for (let i = 0; i < p.samples.length; i++) dt.set(p.samples[i], (dt.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
const cat = (n) => { const u = n.callFrame.url; const f = n.callFrame.functionName;
  if (f === '(idle)') return 'idle'; if (f === '(garbage collector)') return 'gc'; if (f === '(program)') return 'program';
  if (/undici/.test(u)) return 'undici'; if (/hdr-histogram/.test(u)) return 'hdr'; if (/load-test\//.test(u)) return 'coord:' + u.split('/').pop();
  if (/autocannon|http-parser-js|retimer|hyperid/.test(u)) return 'autocannon';
  if (/embedded|lua|adapters|core\//.test(u)) return 'coord-core/embedded';
  if (/bench\//.test(u)) return 'bench';
  if (u.startsWith('node:') || u === '') { if (!u) return 'native:' + f; return 'node:' + u.replace('node:internal/', ''); }
  return 'other:' + u.split('/').slice(-2).join('/'); };
const tot = new Map(); let all = 0;
for (const n of p.nodes) { const t = dt.get(n.id) ?? 0; if (!t) continue; const c = cat(n); if (c === 'idle') continue; all += t; tot.set(c, (tot.get(c) ?? 0) + t); }
const us = (t) => (t / p.requests).toFixed(2);
console.log(file.split("/").pop(), 'requests', p.requests, 'non-idle µs/request', us(all));
for (const [k, t] of [...tot].sort((a, b) => b[1] - a[1]).slice(0, 22)) console.log('  ' + us(t).padStart(6) + ' µs  ' + k);
}
