import { Client } from 'typesense';
import { TypesenseSearchIndex } from '@lib/platform/engines';
import type { CheckpointStore, ServiceConfig } from '@lib/platform';

/** The search index in Typesense (TYPESENSE_URL); checkpoints go to the read store's state after each batch. */
/** `suffix`: a second index family beside the corpora's (the recall index), under `<prefix>-<suffix>` (a prefix the other family's names never match). */
export function connectTypesense(config: ServiceConfig, checkpoints: CheckpointStore, suffix?: string): TypesenseSearchIndex {
  const url = new URL(config.typesenseUrl!);
  const client = new Client({
    nodes: [{ host: url.hostname, port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)), protocol: url.protocol.replace(':', '') }],
    apiKey: config.typesenseApiKey!,
    connectionTimeoutSeconds: 10,
    retryIntervalSeconds: 0.2,
    numRetries: 3,
  });
  return new TypesenseSearchIndex(client, checkpoints, suffix ? `${config.typesenseCollectionPrefix}-${suffix}` : config.typesenseCollectionPrefix);
}
