export * from './connectors';
