export * from './extracted';
export * from './extract';
