import { readdirSync, readFileSync } from 'node:fs';

/** Whether a process descends from this one (the service runs in the test's process): the parent chain in /proc. */
function descendsFromService(pid: number): boolean {
  for (let current = pid, hops = 0; current > 1 && hops < 32; hops++) {
    const ppid = Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${current}/status`, 'utf8'))?.[1] ?? 0);
    if (ppid === process.pid) return true;
    current = ppid;
  }
  return false;
}

/**
 * This service's lambda sandbox processes running a job now (their Node process, whatever wraps it), seen in /proc;
 * not those of services other test files run at the same time.
 */
export function sandboxesRunning(): number {
  let n = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (argv[0] === process.execPath && argv.some((a) => a.endsWith('sandbox.mjs')) && argv.at(-2) === 'run' && descendsFromService(Number(entry))) n++;
    } catch {
      // Gone meanwhile.
    }
  }
  return n;
}
