export * from './agents';
export * from './instructions';
