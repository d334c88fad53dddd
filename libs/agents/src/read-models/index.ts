export * from './agents';
export * from './sessions';
export * from './instructions';
export * from './tool-configurations';
export * from './tool-servers';
export * from './glossaries';
export * from './user-tools';
export * from './connectors';
