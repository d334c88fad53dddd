import type { GenerationPresetEvent } from '@lib/llms/events';
import { GENERATION_PRESETS } from '@lib/llms/read-models';
import { assertNever, patch, put, ReadModelProjection, ReadOp, RecordedEvent, remove } from '@lib/platform/projections';

/** Customer generation presets (`/v2/generation_presets`); the built-in ones are not in the log. */
export const generationPresetsProjection: ReadModelProjection = {
  name: 'generation_presets',
  version: 1,
  target: 'read',
  eventTypes: ['GenerationPresetCreated', 'GenerationPresetReplaced', 'GenerationPresetDeleted'],
  collections: [{ name: GENERATION_PRESETS, indexes: [{ fields: ['name'] }] }],
  apply(recorded: RecordedEvent): ReadOp[] {
    const e = recorded as unknown as GenerationPresetEvent;
    switch (e.type) {
      case 'GenerationPresetCreated':
        return [put(GENERATION_PRESETS, { id: e.data.id, name: e.data.settings.name, settings: e.data.settings, created_at: e.data.createdAt, updated_at: e.data.createdAt })];
      case 'GenerationPresetReplaced':
        return [patch(GENERATION_PRESETS, e.data.id, { set: { name: e.data.settings.name, settings: e.data.settings, updated_at: e.data.replacedAt } })];
      case 'GenerationPresetDeleted':
        return [remove(GENERATION_PRESETS, e.data.id)];
      default:
        return assertNever(e);
    }
  },
};
