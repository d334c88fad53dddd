import { createHash } from 'node:crypto';
import { OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Pool } from 'pg';
import { DomainError, isConnectionError, ServiceConfig, storeUnavailable } from '@lib/platform';
import { ArtifactStore, assertSha256, FileArtifactStore } from '@lib/agents';

/** What the store needs of a pool: node-postgres's `Pool` has it. */
export type ArtifactQueries = Pick<Pool, 'query'>;

/**
 * Artifacts in PostgreSQL, for processes on several hosts (POSTGRES_URL): an artifact uploaded through one API host
 * is read by a turn on another, which a DATA_DIR file would not allow. One row per content, `artifacts(sha256 primary
 * key, bytes bytea, size, created_at)`; a put of bytes already stored changes nothing (`ON CONFLICT DO NOTHING`), so
 * two hosts storing the same file at once both succeed. The table is made before the first use (`onModuleInit`).
 * Rejected: a file store on a shared volume (NFS: one more system to run, and its locking is weaker), the bytes in
 * the event log (every replay would read them).
 */
export class PostgresArtifactStore extends ArtifactStore implements OnModuleInit, OnModuleDestroy {
  private ready?: Promise<void>;

  constructor(
    private readonly db: ArtifactQueries,
    /** Called at module destroy: the pool's end when the store owns it. */
    private readonly release: () => Promise<void> = async () => undefined,
  ) {
    super();
  }

  /** A store on a small pool of its own, ended with the module. */
  static connect(url: string, onPoolError: (e: Error) => void = () => undefined): PostgresArtifactStore {
    const pool = new Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 5_000 });
    // An idle connection the server ends (a restart) is an 'error' event: unheard, it would end the process.
    pool.on('error', onPoolError);
    return new PostgresArtifactStore(pool, () => pool.end());
  }

  async onModuleInit(): Promise<void> {
    await this.table();
  }

  async onModuleDestroy(): Promise<void> {
    await this.release();
  }

  async put(bytes: Buffer): Promise<string> {
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    await this.table();
    await this.query('INSERT INTO artifacts (sha256, bytes, size) VALUES ($1, $2, $3) ON CONFLICT (sha256) DO NOTHING', [sha256, bytes, bytes.length]);
    return sha256;
  }

  async get(sha256: string): Promise<Buffer> {
    const missing = () => new DomainError('unavailable', 'artifact.missing', `The artifact's content (sha256 ${sha256}) is not in this service's artifact store (PostgreSQL table artifacts): it was removed`);
    try {
      assertSha256(sha256);
    } catch {
      throw missing();
    }
    await this.table();
    const { rows } = await this.query<{ bytes: Buffer }>('SELECT bytes FROM artifacts WHERE sha256 = $1', [sha256]);
    if (rows.length === 0) throw missing();
    return rows[0].bytes;
  }

  private table(): Promise<void> {
    this.ready ??= this.query('CREATE TABLE IF NOT EXISTS artifacts (sha256 text PRIMARY KEY, bytes bytea NOT NULL, size integer NOT NULL, created_at timestamptz NOT NULL DEFAULT now())').then(
      () => undefined,
      (e: unknown) => {
        // Two hosts starting at once: IF NOT EXISTS does not stop the loser of the race inserting the same type name.
        if ((e as { code?: string }).code === '23505') return;
        // Not made: the next use tries again (the database may have been restarting).
        this.ready = undefined;
        throw e;
      },
    );
    return this.ready;
  }

  /** Connection failures become 503 with Retry-After at the edge, never the driver's words (they name the server). */
  private async query<R extends object = object>(text: string, values: unknown[] = []): Promise<{ rows: R[] }> {
    try {
      return (await this.db.query(text, values)) as unknown as { rows: R[] };
    } catch (e) {
      if (isConnectionError(e)) throw storeUnavailable('artifact_store', "The artifact store (PostgreSQL)");
      throw e;
    }
  }
}

/** The artifact store of this deployment: PostgreSQL when POSTGRES_URL is set (several hosts), else files under DATA_DIR. */
export function artifactStoreFor(config: ServiceConfig): ArtifactStore {
  return config.postgresUrl ? PostgresArtifactStore.connect(config.postgresUrl) : new FileArtifactStore(config);
}
