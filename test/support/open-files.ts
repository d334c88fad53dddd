import { readdirSync, readlinkSync, realpathSync } from 'node:fs';

/**
 * The files under `dir` that some thread of this process holds open (Linux: /proc/self/fd). After a service's
 * `close()` there must be none: its threads' connections (WAL checkpointer, read thread) used to close a little
 * later, and the last connection to close removes `-wal` and `-shm` by name, racing whoever touches the files next.
 */
export function filesHeldOpen(dir: string): string[] {
  const root = `${realpathSync(dir)}/`;
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.startsWith(root) ? [target.slice(root.length)] : [];
    } catch {
      return []; // closed meanwhile (or the listing's own descriptor)
    }
  });
}
