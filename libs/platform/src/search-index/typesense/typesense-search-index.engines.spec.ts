import { randomUUID } from 'node:crypto';
import { Client } from 'typesense';
import type { CheckpointStore } from '../../projections/projection';
import { describeSearchIndexContract } from '../contract/search-index.contract';
import { TypesenseSearchIndex } from './typesense-search-index';

const url = process.env.TYPESENSE_URL;
const apiKey = process.env.TYPESENSE_API_KEY;

if (!url || !apiKey) {
  // Not console.warn: Jest drops the console of an all-skipped file when it runs files in workers.
  process.stderr.write(`skipped: ${url ? 'TYPESENSE_API_KEY' : 'TYPESENSE_URL'} is not set (start one with docker compose up -d typesense)\n`);
  describe.skip('SearchIndex contract: TypesenseSearchIndex', () => {
    it('needs TYPESENSE_URL and TYPESENSE_API_KEY', () => undefined);
  });
} else {
  // Collection creation and deletion on a real server can outlast Jest's 5 s default.
  jest.setTimeout(30_000);
  /** Checkpoints in memory: the contract checks the sink's bookkeeping, not a durable store. */
  const memoryCheckpoints = (): CheckpointStore => {
    const positions = new Map<string, number>();
    return {
      load: async (p, g) => positions.get(`${p}/${g}`) ?? 0,
      save: async (p, g, position) => void positions.set(`${p}/${g}`, position),
    };
  };
  // One prefix per fixture (no `_`: the adapter parses `<prefix>_<index>_g<n>`), so runs against a
  // long-lived server never meet each other's collections; dispose removes everything under it.
  const run = `ct${Date.now().toString(36)}${randomUUID().replace(/-/g, '').slice(0, 6)}`;
  let fixtures = 0;
  describeSearchIndexContract('TypesenseSearchIndex', async () => {
    const { hostname, port, protocol } = new URL(url);
    const client = new Client({
      nodes: [{ host: hostname, port: Number(port || (protocol === 'https:' ? 443 : 8108)), protocol: protocol.replace(':', '') }],
      apiKey,
      connectionTimeoutSeconds: 10,
      logLevel: 'warn',
    });
    const prefix = `${run}-${++fixtures}`;
    const mine = (name: string) => name.startsWith(`${prefix}_`);
    return {
      index: new TypesenseSearchIndex(client, memoryCheckpoints(), prefix),
      dispose: async () => {
        for (const a of (await client.aliases().retrieve()).aliases) if (mine(a.name)) await client.aliases(a.name).delete();
        for (const c of await client.collections().retrieve()) if (mine(c.name)) await client.collections(c.name).delete();
      },
    };
  });
}
