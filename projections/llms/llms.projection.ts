import type { LlmEvent } from '@lib/llms/events';
import { llmFields, llmRow, LLMS } from '@lib/llms/read-models';
import { assertNever, patch, put, ReadModelProjection, ReadOp, RecordedEvent, remove } from '@lib/platform/projections';

/** Registered language models, for `/v2/llms` and for resolving `model` in chat completions. */
export const llmsProjection: ReadModelProjection = {
  name: 'llms',
  version: 1,
  target: 'read',
  eventTypes: ['LlmCreated', 'LlmUpdated', 'LlmDeleted'],
  collections: [{ name: LLMS, indexes: [{ fields: ['name'] }] }],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as LlmEvent;
    switch (event.type) {
      case 'LlmCreated':
        return [put(LLMS, llmRow(event.data, recorded.position))];
      case 'LlmUpdated':
        return [patch(LLMS, event.data.llmId, { set: { ...llmFields(event.data.changes), updated_at: event.data.updatedAt, position: recorded.position } })];
      case 'LlmDeleted':
        return [remove(LLMS, event.data.llmId)];
      default:
        return assertNever(event);
    }
  },
};
