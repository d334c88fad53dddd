import { createHash, randomUUID } from 'node:crypto';
import { chmod, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DomainError, ensurePrivateDir, ServiceConfig } from '@lib/platform';
import { ArtifactStore, assertSha256 } from './artifact-store.port';

export { ArtifactStore, assertSha256 } from './artifact-store.port';

/**
 * The embedded default: `DATA_DIR/artifacts/<sha256[0:2]>/<sha256>`, written to a temporary file then renamed (a
 * crash leaves no half file under a hash), owner-only like every data file. Every process must share the data dir.
 */
export class FileArtifactStore extends ArtifactStore {
  private readonly root: string;

  constructor(config: ServiceConfig) {
    super();
    this.root = join(config.dataDir, 'artifacts');
  }

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
    assertSha256(sha256);
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
