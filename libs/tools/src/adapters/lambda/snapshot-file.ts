import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const DIGEST_BYTES = 32;

/**
 * The lambda start snapshot kept in a directory of DATA_DIR across restarts, so a restarted service starts its
 * sandboxes from it (≈ 0.4 s) instead of loading Pyodide in full while a new snapshot is made. One file per key
 * (Pyodide, runtime and Node versions): a stale one is never read, and is removed when a new one is written. The
 * file holds the SHA-256 of the snapshot before it: a torn or altered file is refused (and removed), never fed to a
 * sandbox. Written to a temporary name and renamed, so a crash leaves the old file or the new one whole.
 */
export class SnapshotFile {
  constructor(
    private readonly dir: string,
    private readonly key: string,
  ) {}

  private get path(): string {
    return join(this.dir, `snapshot-${this.key}.bin`);
  }

  /** Whether a snapshot is kept under this key (not checked: `read` checks it). */
  exists(): boolean {
    return existsSync(this.path);
  }

  /** The kept snapshot, or undefined when there is none or it does not match its digest. */
  read(): Buffer | undefined {
    let all: Buffer;
    try {
      all = readFileSync(this.path);
    } catch {
      return undefined;
    }
    const data = all.subarray(DIGEST_BYTES);
    if (all.length > DIGEST_BYTES && createHash('sha256').update(data).digest().equals(all.subarray(0, DIGEST_BYTES))) return data;
    rmSync(this.path, { force: true });
    return undefined;
  }

  /** Keeps `data`; false (and `onError` told why) when it could not be written. */
  write(data: Buffer, onError: (e: Error) => void): boolean {
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      const temporary = `${this.path}.${process.pid}.tmp`;
      writeFileSync(temporary, Buffer.concat([createHash('sha256').update(data).digest(), data]), { mode: 0o600 });
      renameSync(temporary, this.path);
      for (const name of readdirSync(this.dir)) if (name.startsWith('snapshot-') && join(this.dir, name) !== this.path && !name.endsWith('.tmp')) rmSync(join(this.dir, name), { force: true });
      return true;
    } catch (e) {
      onError(e as Error);
      return false;
    }
  }
}
