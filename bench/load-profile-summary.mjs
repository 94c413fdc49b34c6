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

/** What ran a profile node: a package, one of coord's load-test files, a Node module or a native call. */
function category(node) {
  const { url, functionName } = node.callFrame;
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(garbage collector)') return 'gc';
  if (functionName === '(program)') return 'program';
  if (/undici/.test(url)) return 'undici';
  if (/hdr-histogram/.test(url)) return 'hdr';
  if (/load-test\//.test(url)) return `coord:${url.split('/').pop()}`;
  if (/autocannon|http-parser-js|retimer|hyperid/.test(url)) return 'autocannon';
  if (/embedded|lua|adapters|core\//.test(url)) return 'coord-core/embedded';
  if (/bench\//.test(url)) return 'bench';
  if (!url) return `native:${functionName}`;
  if (url.startsWith('node:')) return `node:${url.replace('node:internal/', '')}`;
  return `other:${url.split('/').slice(-2).join('/')}`;
}

for (const file of process.argv.slice(2)) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const selfTime = new Map();
  profile.samples.forEach((id, i) => selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const totals = new Map();
  let all = 0;
  for (const node of profile.nodes) {
    const t = selfTime.get(node.id) ?? 0;
    const c = category(node);
    if (!t || c === 'idle') continue;
    all += t;
    totals.set(c, (totals.get(c) ?? 0) + t);
  }
  const perRequest = (t) => (t / profile.requests).toFixed(2);
  console.log(file.split('/').pop(), 'requests', profile.requests, 'non-idle µs/request', perRequest(all));
  for (const [c, t] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, 22)) console.log(`  ${perRequest(t).padStart(6)} µs  ${c}`);
}
