import { createHash, randomUUID } from 'node:crypto';
import { chmod, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { DomainError, ensurePrivateDir, SERVICE_CONFIG, ServiceConfig } from '@lib/platform';

/**
 * Session artifacts' bytes, content-addressed: `DATA_DIR/artifacts/<sha256[0:2]>/<sha256>`, written to a
 * temporary file then renamed (a crash leaves no half file under a hash), owner-only like every data file. The
 * event log holds only the hash and the metadata, so it stays small and replayable; a file uploaded twice is
 * stored once. Rejected: bytes in the events (every replay and rebuild would read them).
 */
@Injectable()
export class ArtifactStore {
  private readonly root: string;

  constructor(@Inject(SERVICE_CONFIG) config: ServiceConfig) {
    this.root = join(config.dataDir, 'artifacts');
  }

  /** Stores the bytes (once per content) and returns their sha256. */
  async put(bytes: Buffer): Promise<string> {
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const path = this.path(sha256);
    if (await exists(path)) return sha256;
    ensurePrivateDir(this.root);
    await mkdir(join(this.root, sha256.slice(0, 2)), { recursive: true, mode: 0o700 });
    const temp = `${path}.${randomUUID()}.tmp`;
    await writeFile(temp, bytes, { mode: 0o600 });
    await chmod(temp, 0o600);
    await rename(temp, path);
    return sha256;
  }

  async get(sha256: string): Promise<Buffer> {
    try {
      return await readFile(this.path(sha256));
    } catch {
      throw new DomainError('unavailable', 'artifact.missing', `The artifact's content (sha256 ${sha256}) is not in this service's artifact store (${this.root}): it was removed, or this process uses another DATA_DIR`);
    }
  }

  private path(sha256: string): string {
    if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error(`not a sha256: ${sha256}`);
    return join(this.root, sha256.slice(0, 2), sha256);
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
