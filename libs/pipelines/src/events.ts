/**
 * The events entry of the pipelines context (`@lib/pipelines/events`): the event types of its streams. Domain code
 * only.
 */
export type { PipelineEvent } from './domain/pipeline';
export type { PipelineRunEvent } from './domain/pipeline-run';
