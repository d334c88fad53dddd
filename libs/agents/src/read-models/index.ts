export * from './agents';
export * from './sessions';
export * from './instructions';
