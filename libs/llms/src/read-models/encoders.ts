import { collection } from '@lib/platform/projections';
import type { StoredAuth } from '../domain/auth';
import type { EncoderEvent, EncoderSettings } from '../domain/encoder';

/** One row per registered encoder, keyed by id (projections/llms/encoders). `auth` holds ciphertext only. */
export type EncoderRow = {
  readonly id: string;
  readonly name: string;
  readonly type: EncoderSettings['type'];
  readonly description: string;
  readonly uri: string;
  readonly model: string;
  readonly output_dimensions: number;
  readonly send_dimensions: boolean;
  readonly auth: StoredAuth | null;
  readonly enabled: boolean;
  readonly created_at: string;
};

export const ENCODERS = collection<EncoderRow>('encoders');

type EncoderCreated = Extract<EncoderEvent, { type: 'EncoderCreated' }>['data'];

export const encoderRow = (d: EncoderCreated): EncoderRow => ({
  id: d.encoderId,
  name: d.name,
  type: d.settings.type,
  description: d.settings.description,
  uri: d.settings.uri,
  model: d.settings.model,
  output_dimensions: d.settings.outputDimensions,
  send_dimensions: d.settings.sendDimensions,
  auth: d.settings.auth,
  enabled: true,
  created_at: d.createdAt,
});
