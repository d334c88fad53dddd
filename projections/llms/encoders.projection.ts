import type { EncoderEvent } from '@lib/llms/events';
import { encoderRow, ENCODERS } from '@lib/llms/read-models';
import { assertNever, put, ReadModelProjection, ReadOp, RecordedEvent } from '@lib/platform/projections';

/** Encoders registered through `POST /v2/encoders`, for `GET /v2/encoders` and for corpora that name one. */
export const encodersProjection: ReadModelProjection = {
  name: 'encoders',
  version: 1,
  target: 'read',
  eventTypes: ['EncoderCreated'],
  collections: [{ name: ENCODERS, indexes: [{ fields: ['name'] }] }],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as EncoderEvent;
    switch (event.type) {
      case 'EncoderCreated':
        return [put(ENCODERS, encoderRow(event.data))];
      default:
        return assertNever(event.type);
    }
  },
};
