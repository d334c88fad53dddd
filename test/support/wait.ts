import { readdirSync, readlinkSync, realpathSync } from 'node:fs';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls `probe` until it gives a value (not undefined) and returns it; throws naming `what` after `timeoutMs`.
 * For outcomes that background work (worker wing, projections) reaches in its own time.
 */
export async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 60_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/**
 * Waits until no thread of this process holds a file under `dir` open (Linux: /proc/self/fd). A closed service's
 * threads (WAL checkpointer, read thread, graph thread) let their connections go a little after `close()` resolves,
 * and the last connection to close removes `-wal` and `-shm` by name: a test that then edits the data dir's files
 * would race them (a `-shm` gone between listing and reading, or a renamed file removed under its new name).
 */
export async function untilReleased(dir: string, timeoutMs = 10_000): Promise<void> {
  const root = `${realpathSync(dir)}/`;
  const held = () =>
    readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`).startsWith(root);
      } catch {
        return false; // closed meanwhile (or the listing's own descriptor)
      }
    });
  await until(`the files under ${dir} to be closed`, () => (held().length === 0 ? true : undefined), timeoutMs, 20);
}
