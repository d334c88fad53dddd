import { Client } from 'pg';
import { havePostgres, testDatabase } from '../../test/support/postgres';
import { connectPostgresReads } from './postgres-reads';

if (!havePostgres('connectPostgresReads')) {
  describe.skip('connectPostgresReads', () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  describe('connectPostgresReads', () => {
    it('creates the schema on an empty database, and a second process connects to it as it is', async () => {
      const url = (await testDatabase('connect_reads'))!;
      const [one, two] = [await connectPostgresReads(url), await connectPostgresReads(url)];
      try {
        const client = new Client({ connectionString: url });
        await client.connect();
        const { rows } = await client.query<{ tablename: string }>(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`);
        await client.end();
        expect(rows.map((r) => r.tablename)).toEqual(['projection_checkpoints', 'projection_dead_letters', 'projection_state', 'rm_collections', 'rm_tables']);
        const shape = { name: 'p', version: 1, collections: [{ name: 'things' }] };
        await one.reads.prepare(shape, 1);
        await one.reads.activate(shape, 1);
        await one.reads.applyBatch('p', 1, [{ position: 1, ops: [{ op: 'put', collection: 'things', doc: { id: 'a' } }] }], 1);
        expect(await two.reads.get('things', 'a')).toEqual({ id: 'a' });
        expect(await two.state.load('p', 1)).toBe(1);
      } finally {
        await Promise.all([one.close(), two.close()]);
      }
    });

    it('fails on a wrong password without the password in the error', async () => {
      const url = new URL((await testDatabase('connect_reads_denied'))!);
      url.password = 'not-the-password-s3cr3t';
      const err = await connectPostgresReads(url.toString()).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err).toBeInstanceOf(Error);
      expect(`${err?.message} ${err?.stack}`).not.toContain('s3cr3t');
    });
  });
}
