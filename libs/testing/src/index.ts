export * from './events';
export * from './projection-harness';
export * from './decider';
export * from './scripted-openai-server';
