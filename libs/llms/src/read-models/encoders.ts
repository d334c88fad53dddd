import { collection } from '@lib/platform/projections';
import type { StoredAuth } from '../domain/auth';
import type { EncoderEvent, EncoderSettings, PinnedModelSettings } from '../domain/encoder';

/** Where an in-process (`onnx`) encoder's model is and how it runs. */
export type OnnxEncoderRow = { readonly model_dir: string; readonly file: string; readonly settings: PinnedModelSettings };

/**
 * One row per registered encoder, keyed by id (projections/llms/encoders). `auth` holds ciphertext only. An
 * `onnx` encoder has `onnx`, its Hub id (if any) in `model`, an empty `uri` and no auth.
 */
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
  /** Absent on rows written before in-process encoders existed (all endpoints). */
  readonly onnx?: OnnxEncoderRow | null;
  readonly enabled: boolean;
  readonly created_at: string;
};

export const ENCODERS = collection<EncoderRow>('encoders');

type EncoderCreated = Extract<EncoderEvent, { type: 'EncoderCreated' }>['data'];

export function encoderRow(d: EncoderCreated): EncoderRow {
  const s = d.settings;
  const common = { id: d.encoderId, name: d.name, type: s.type, description: s.description, output_dimensions: s.outputDimensions, enabled: true, created_at: d.createdAt };
  switch (s.type) {
    case 'openai-compatible':
      return { ...common, uri: s.uri, model: s.model, send_dimensions: s.sendDimensions, auth: s.auth, onnx: null };
    case 'onnx':
      return { ...common, uri: '', model: s.model ?? '', send_dimensions: false, auth: null, onnx: { model_dir: s.modelDir, file: s.file, settings: s.settings } };
    default: {
      const _exhaustive: never = s;
      return _exhaustive;
    }
  }
}
