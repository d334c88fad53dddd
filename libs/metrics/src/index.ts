export * from './read-models';
export * from './application/metric-queries';
export * from './metrics.module';
