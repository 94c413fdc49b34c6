// What kills a worker's Firefoxes when the worker itself is killed (-9, or
// the OOM killer), which no hook of its own outlives. Each Firefox is started
// as a process group leader, and a small shell process is told the group and
// folder of each running one. It reads its stdin until the worker's end of
// the pipe closes, which the kernel does however the worker dies, then kills
// the groups still listed and removes their folders.
import { spawn, type ChildProcess } from 'node:child_process';

/**
 * Keeps `pgid folder` lines as files in a folder of its own; at the end of its input kills each
 * group listed and removes its folder. Signals sent to the worker's group do not stop it.
 */
const SCRIPT = `trap '' INT TERM HUP
list=$(mktemp -d "\${TMPDIR:-/tmp}/coord-firefox-watch-XXXXXX") || exit 1
while read -r op pgid folder; do
  case "$op" in
    +) printf '%s\\n' "$folder" > "$list/$pgid" ;;
    -) rm -f "$list/$pgid" ;;
  esac
done
for entry in "$list"/*; do
  [ -e "$entry" ] || continue
  kill -KILL "-\${entry##*/}" 2>/dev/null
  sleep 1
  rm -rf "$(cat "$entry")"
done
rm -rf "$list"`;

let watchdog: ChildProcess | undefined;

function started(): ChildProcess {
  if (!watchdog || watchdog.exitCode !== null) {
    // detached: its own session, so a Ctrl-C to the worker's terminal does not end it first
    watchdog = spawn('sh', ['-c', SCRIPT], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    watchdog.on('error', () => {}); // no sh: Firefoxes are still killed on every exit but -9
    watchdog.stdin!.on('error', () => {});
    // it must not keep the worker running: it is there for when the worker is gone
    watchdog.unref();
    (watchdog.stdin as unknown as { unref?: () => void }).unref?.();
  }
  return watchdog;
}

/** Firefox `pgid` (its pid: it leads its group) runs with its files in `folder`. */
export function watchFirefox(pgid: number, folder: string): void {
  started().stdin!.write(`+ ${pgid} ${folder}\n`);
}

/** Firefox `pgid` has exited: nothing to kill for it any more. */
export function unwatchFirefox(pgid: number): void {
  watchdog?.stdin?.write(`- ${pgid}\n`);
}
