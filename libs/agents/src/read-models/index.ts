export * from './agents';
export * from './sessions';
export * from './instructions';
export * from './glossaries';
export * from './traces';
export * from './evaluations';
export * from './session-recall';
