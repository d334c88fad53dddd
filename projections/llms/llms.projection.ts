import { LLMS } from '@lib/llms';
import type { LlmEvent, LlmSettings } from '@lib/llms/events';
import { assertNever, ReadModelProjection, ReadOp, RecordedEvent } from '@lib/platform/projections';

/** Settings field → read-model field (the reference API's names). */
const FIELD: Record<keyof LlmSettings, string> = {
  type: 'type',
  model: 'model',
  uri: 'uri',
  description: 'description',
  headers: 'headers',
  idleTimeoutSeconds: 'idle_timeout_seconds',
  capabilities: 'capabilities',
  quota: 'llm_quota',
  enabled: 'enabled',
  auth: 'auth',
};

const fields = (settings: Partial<LlmSettings>) =>
  Object.fromEntries(Object.entries(settings).map(([k, v]) => [FIELD[k as keyof LlmSettings], v]));

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
      case 'LlmCreated': {
        const d = event.data;
        const doc = { id: d.llmId, name: d.name, ...fields(d.settings), created_at: d.createdAt, updated_at: d.createdAt, position: recorded.position };
        return [{ op: 'put', collection: LLMS, doc }];
      }
      case 'LlmUpdated':
        return [{ op: 'patch', collection: LLMS, id: event.data.llmId, set: { ...fields(event.data.changes), updated_at: event.data.updatedAt, position: recorded.position } }];
      case 'LlmDeleted':
        return [{ op: 'delete', collection: LLMS, id: event.data.llmId }];
      default:
        return assertNever(event);
    }
  },
};
