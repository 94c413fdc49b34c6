// CPU time other processes have used so far, for the benches: user + system
// from /proc/<pid>/stat (Linux), in clock ticks of 10 ms.
import { readdirSync, readFileSync } from 'node:fs';

/** CPU µs the processes have used so far, summed. */
export function processesCpuUs(pids) {
  return pids.reduce((sum, pid) => {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return sum + (Number(fields[11]) + Number(fields[12])) * 10_000; // utime, stime
  }, 0);
}

/**
 * CPU µs a process and all its descendants have used so far: its own, its children's it has waited for (cutime,
 * cstime), and those of the descendants still running (for `coord load run --workers auto`'s worker processes, or
 * autocannon's). Threads count in their process.
 */
export function processTreeCpuUs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  let us = (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 10_000;
  for (const child of childrenOf(pid)) us += processTreeCpuUs(child);
  return us;
}

function childrenOf(pid) {
  const pids = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      pids.push(...readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
    } catch {
      // the thread ended
    }
  }
  return pids;
}
