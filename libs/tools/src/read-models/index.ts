export * from './tool-configurations';
export * from './tool-servers';
export * from './user-tools';
