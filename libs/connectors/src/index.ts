export * from './domain/connector';
export * from './domain/connector-message';
export * from './read-models';
export * from './application/connectors/connectors';
export * from './application/connectors/connector-webhooks';
export * from './application/connectors/connector-replier';
export type { InboundRequest, LiveConnector } from './application/connectors/connector-platform.port';
export * from './connectors.module';
