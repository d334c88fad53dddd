import { MongoClient } from 'mongodb';
import { MongoProjectionState, MongoReadStore } from '@lib/platform/engines';
import type { ServiceConfig } from '@lib/platform';

/** Read models and projection state in MongoDB (MONGODB_URL). */
export async function connectMongo(config: ServiceConfig) {
  const client = new MongoClient(config.mongoUrl!, { appName: 'agent-retrieval-service' });
  await client.connect();
  const db = client.db(config.mongoDatabase);
  const state = new MongoProjectionState(db);
  return { client, state, reads: new MongoReadStore(db, state), close: () => client.close() };
}
