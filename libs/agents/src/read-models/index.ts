export * from './agents';
export * from './sessions';
