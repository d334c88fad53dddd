export * from './extracted';
export * from './extract';
export * from './extract-pool';
export * from './limits';
