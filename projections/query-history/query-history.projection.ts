import type { QueryHistoryEvent } from '@lib/retrieval/events';
import { QUERY_HISTORY, queryHistoryRow } from '@lib/retrieval/read-models';
import { put, ReadModelProjection, ReadOp, RecordedEvent } from '@lib/platform/projections';

/** Summary rows of recorded queries (`GET /v2/queries`); the detail is read from each query's stream. */
export const queryHistoryProjection: ReadModelProjection = {
  name: 'query_history',
  version: 1,
  target: 'read',
  eventTypes: ['QueryHistoryRecorded'],
  collections: [{ name: QUERY_HISTORY, indexes: [{ fields: ['started_at'] }, { fields: ['chat_id'] }] }],
  apply(recorded: RecordedEvent): ReadOp[] {
    const e = recorded as unknown as QueryHistoryEvent;
    return e.type === 'QueryHistoryRecorded' ? [put(QUERY_HISTORY, queryHistoryRow(e.data))] : [];
  },
};
