export * from './domain/pipeline';
export * from './domain/pipeline-source';
export * from './domain/pipeline-run';
export * from './read-models';
export * from './application/pipelines/pipelines';
export * from './application/runs/pipeline-runs';
export * from './application/runner/pipeline-runner';
export * from './pipelines.module';
