export * from './agents';
