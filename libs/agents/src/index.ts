export * from './domain/agent-config';
export * from './domain/agent';
export * from './read-models';
export * from './application/agent-writer';
export * from './application/agents/agent-commands';
export * from './application/agent-queries/agent-queries';
export * from './agents.module';
