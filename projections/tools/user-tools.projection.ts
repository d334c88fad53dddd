import { UserToolEvent } from '@lib/tools/events';
import { USER_TOOLS } from '@lib/tools/read-models';
import { assertNever, patch, put, ReadModelProjection, ReadOp, RecordedEvent, remove } from '@lib/platform/projections';

/** User-defined tools (`/v2/tools`: lambdas). */
export const userToolsProjection: ReadModelProjection = {
  name: 'user_tools',
  version: 1,
  target: 'read',
  eventTypes: ['UserToolCreated', 'UserToolUpdated', 'UserToolDeleted'],
  collections: [{ name: USER_TOOLS }],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as UserToolEvent;
    switch (event.type) {
      case 'UserToolCreated':
        return [put(USER_TOOLS, { id: event.data.id, name: event.data.settings.name, type: event.data.settings.type, enabled: event.data.settings.enabled, settings: event.data.settings, created_at: event.data.createdAt, updated_at: event.data.createdAt })];
      case 'UserToolUpdated':
        return [patch(USER_TOOLS, event.data.id, { set: { enabled: event.data.settings.enabled, settings: event.data.settings, updated_at: event.data.updatedAt } })];
      case 'UserToolDeleted':
        return [remove(USER_TOOLS, event.data.id)];
      default:
        return assertNever(event);
    }
  },
};
