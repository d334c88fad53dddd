import { createHash } from 'node:crypto';
import { createServer } from 'node:net';
import { Pool } from 'pg';
import { DomainError, loadConfig } from '@lib/platform';
import { ArtifactStore, FileArtifactStore } from '@lib/agents';
import { havePostgres, testDatabase } from '../../test/support/postgres';
import { scratchDir } from '../../test/support/scratch-dir';
import { artifactStoreFor, PostgresArtifactStore } from './postgres-artifacts';

/**
 * Both artifact stores keep the same promises: content-addressed, stored once, readable by another process on the
 * same storage (the file store: the same DATA_DIR; PostgreSQL: the same database, any host).
 */
function describeArtifactStore(name: string, setUp: () => Promise<{ open: () => Promise<ArtifactStore>; stored: () => Promise<number> }>) {
  describe(name, () => {
    let open: () => Promise<ArtifactStore>;
    let stored: () => Promise<number>;
    beforeAll(async () => {
      ({ open, stored } = await setUp());
    });

    it('answers the sha256 of the bytes and gives them back, to another process on the same storage too', async () => {
      const [a, b] = [await open(), await open()];
      const bytes = Buffer.from([0, 1, 2, 255, 254, 0x0a, 0x27, 0x5c]);
      const sha256 = await a.put(bytes);
      expect(sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
      expect((await a.get(sha256)).equals(bytes)).toBe(true);
      expect((await b.get(sha256)).equals(bytes)).toBe(true);
    });

    it('stores a content once, however often and from however many processes it is put', async () => {
      const [a, b] = [await open(), await open()];
      const before = await stored();
      const bytes = Buffer.from(`the same file ${Math.random()}`);
      const hashes = await Promise.all([a.put(bytes), b.put(bytes), a.put(bytes), b.put(bytes)]);
      expect(new Set(hashes).size).toBe(1);
      expect(await stored()).toBe(before + 1);
    });

    it('keeps a megabyte of arbitrary bytes whole', async () => {
      const store = await open();
      const bytes = Buffer.alloc(1024 * 1024);
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 256;
      expect((await store.get(await store.put(bytes))).equals(bytes)).toBe(true);
    });

    it('says artifact.missing for content it does not hold, or a name that is no sha256', async () => {
      const store = await open();
      for (const sha256 of ['0'.repeat(64), '../../etc/passwd', "x' OR '1'='1"]) {
        const error = await store.get(sha256).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DomainError);
        expect(error).toMatchObject({ kind: 'unavailable', code: 'artifact.missing' });
      }
    });
  });
}

describeArtifactStore('FileArtifactStore', async () => {
  const config = loadConfig({ DATA_DIR: scratchDir('ars-artifacts-') });
  return {
    open: async () => new FileArtifactStore(config),
    stored: async () => {
      const { readdir } = await import('node:fs/promises');
      const { join } = await import('node:path');
      const root = join(config.dataDir, 'artifacts');
      const dirs = await readdir(root).catch(() => [] as string[]);
      let n = 0;
      for (const d of dirs) n += (await readdir(join(root, d))).filter((f) => !f.endsWith('.tmp')).length;
      return n;
    },
  };
});

const pg = havePostgres('PostgresArtifactStore') ? describe : describe.skip;

pg('PostgreSQL artifacts', () => {
  const stores: PostgresArtifactStore[] = [];
  let url: string;
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.onModuleDestroy()));
  });
  beforeAll(async () => {
    url = (await testDatabase('artifacts'))!;
  });

  describeArtifactStore('PostgresArtifactStore', async () => ({
    open: async () => {
      // A store of its own pool, as each host has.
      const store = PostgresArtifactStore.connect(url);
      stores.push(store);
      await store.onModuleInit();
      return store;
    },
    stored: async () => {
      const pool = new Pool({ connectionString: url, max: 1 });
      try {
        return Number((await pool.query('SELECT count(*) AS n FROM artifacts')).rows[0].n);
      } finally {
        await pool.end();
      }
    },
  }));

  it('makes its table on first use when the module did not (no init hook ran)', async () => {
    const fresh = (await testDatabase('artifacts_lazy'))!;
    const store = PostgresArtifactStore.connect(fresh);
    stores.push(store);
    const sha256 = await store.put(Buffer.from('first'));
    expect((await store.get(sha256)).toString()).toBe('first');
  });

  it('answers 503-kind artifact_store.unavailable with a retry delay while the database cannot be reached, never its URL', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = server.address() as { port: number };
        server.close(() => resolve(p));
      });
    });
    const store = PostgresArtifactStore.connect(`postgres://ars:s3cret-pass@127.0.0.1:${port}/nothing`);
    stores.push(store);
    for (const call of [() => store.put(Buffer.from('x')), () => store.get('a'.repeat(64))]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DomainError);
      expect(error).toMatchObject({ kind: 'unavailable', code: 'artifact_store.unavailable', details: { retryAfterSeconds: 2 } });
      expect((error as Error).message).not.toMatch(/s3cret|127\.0\.0\.1/);
    }
  });
});

/** With POSTGRES_URL the configuration requires the keys every host must share (kernel/config.ts). */
const SHARED_KEYS = { ADMIN_API_KEY: 'zut_shared_owner_key_0123456789abcdef', OAUTH_SIGNING_KEY: 'k'.repeat(44), SECRETS_KEY: 'a'.repeat(64) };

describe('the store AgentsModule binds', () => {
  it('is PostgreSQL when POSTGRES_URL is set, the files under DATA_DIR otherwise', async () => {
    const dataDir = scratchDir('ars-artifacts-choice-');
    expect(artifactStoreFor(loadConfig({ DATA_DIR: dataDir }))).toBeInstanceOf(FileArtifactStore);
    const onPostgres = artifactStoreFor(loadConfig({ DATA_DIR: dataDir, POSTGRES_URL: 'postgres://ars:pw@127.0.0.1:1/ars', ...SHARED_KEYS }));
    expect(onPostgres).toBeInstanceOf(PostgresArtifactStore);
    await (onPostgres as PostgresArtifactStore).onModuleDestroy();
  });
});
