export * from './domain/alias';
export * from './read-models';
export * from './application/aliases/aliases';
export * from './application/aliases/end-user-sessions';
export * from './aliases.module';
