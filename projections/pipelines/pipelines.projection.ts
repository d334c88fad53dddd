import type { PipelineEvent } from '@lib/pipelines/events';
import { PIPELINES } from '@lib/pipelines/read-models';
import { assertNever, patch, put, ReadModelProjection, ReadOp, RecordedEvent, remove } from '@lib/platform/projections';

/** Pipelines by key (docs/pipelines.md); the sealed credential is not copied here. */
export const pipelinesProjection: ReadModelProjection = {
  name: 'pipelines',
  version: 1,
  target: 'read',
  eventTypes: ['PipelineCreated', 'PipelineUpdated', 'PipelineDeleted', 'PipelineRunRequested', 'PipelineRunClosed', 'PipelineSourceSynced'],
  collections: [{ name: PIPELINES, indexes: [{ fields: ['source_type'] }, { fields: ['enabled'] }, { fields: ['active_run_id'] }] }],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as PipelineEvent;
    switch (event.type) {
      case 'PipelineCreated': {
        const d = event.data;
        return [put(PIPELINES, { id: d.key, pipeline_id: d.pipelineId, source_type: d.settings.source.type, enabled: d.settings.enabled, settings: d.settings, active_run_id: null, watermark: null, created_at: d.createdAt, updated_at: d.createdAt })];
      }
      case 'PipelineUpdated': {
        const d = event.data;
        return [patch(PIPELINES, d.key, { set: { source_type: d.settings.source.type, enabled: d.settings.enabled, settings: d.settings, updated_at: d.updatedAt } })];
      }
      case 'PipelineDeleted':
        return [remove(PIPELINES, event.data.key)];
      case 'PipelineRunRequested':
        return [patch(PIPELINES, event.data.key, { set: { active_run_id: event.data.runId } })];
      case 'PipelineRunClosed':
        return [patch(PIPELINES, event.data.key, { set: { active_run_id: null } })];
      // The watermark is when the whole site was last synced (the reference's value is opaque).
      case 'PipelineSourceSynced':
        return [patch(PIPELINES, event.data.key, { set: { watermark: { value: event.data.syncedAt, updated_at: event.data.syncedAt } } })];
      case 'PipelineDeadLetterAdded':
      case 'PipelineDeadLetterRemoved':
      case 'PipelineTriggerFired':
        return [];
      default:
        return assertNever(event);
    }
  },
};
