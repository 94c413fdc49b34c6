// CPU time other processes have used so far, for the benches: user + system
// from /proc/<pid>/stat (Linux), in clock ticks of 10 ms.
import { readFileSync } from 'node:fs';

/** CPU µs the processes have used so far, summed. */
export function processesCpuUs(pids) {
  return pids.reduce((sum, pid) => {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return sum + (Number(fields[11]) + Number(fields[12])) * 10_000; // utime, stime
  }, 0);
}
