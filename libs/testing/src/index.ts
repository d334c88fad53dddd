export * from './events';
export * from './projection-harness';
