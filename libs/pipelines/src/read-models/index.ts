export * from './pipelines';
export * from './pipeline-runs';
