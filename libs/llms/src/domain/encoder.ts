import { conflict } from '@lib/platform/kernel';
import type { StoredAuth } from './auth';

/**
 * An embedding endpoint registered through `POST /v2/encoders` (docs/encoders.md): a named encoder corpora may
 * choose, beside those of the configuration. Its credentials are sealed like a model's (`StoredAuth`).
 */
export interface EndpointEncoderSettings {
  readonly type: 'openai-compatible';
  readonly description: string;
  /** The embeddings endpoint itself (`https://api.openai.com/v1/embeddings`), as the reference's `uri`. */
  readonly uri: string;
  readonly model: string;
  /** The vectors' length, learnt by a probe at creation; fixed for the encoder's life. */
  readonly outputDimensions: number;
  /** Whether `dimensions` is sent upstream (the caller asked for a length the model shortens its output to). */
  readonly sendDimensions: boolean;
  readonly auth: StoredAuth | null;
}

/** How an in-process model runs, pinned at registration (`OnnxModelSettings` of the encoders library). */
export interface PinnedModelSettings {
  readonly pooling: 'mean' | 'cls';
  readonly normalize: boolean;
  readonly queryPrefix: string;
  readonly documentPrefix: string;
  readonly maxTokens: number;
  readonly activation: 'sigmoid' | 'none';
}

/**
 * An ONNX sentence-embedding model run inside the service (docs/encoders.md). The settings resolved at
 * registration (the table of known models, the directory's pooling file, the caller's fields) are recorded, so a
 * later release that changes the table never changes the vectors of a corpus already built on it.
 */
export interface OnnxEncoderSettings {
  readonly type: 'onnx';
  readonly description: string;
  /** The model directory on the service's machine, absolute (inside ENCODER_MODELS_ROOT). */
  readonly modelDir: string;
  /** The Hugging Face id it was fetched by or that the directory holds, when known. */
  readonly model: string | null;
  /** The graph inside the directory. */
  readonly file: string;
  readonly settings: PinnedModelSettings;
  /** The vectors' length, learnt by running the model at registration. */
  readonly outputDimensions: number;
}

export type EncoderSettings = EndpointEncoderSettings | OnnxEncoderSettings;

export type EncoderEvent = { type: 'EncoderCreated'; data: { encoderId: string; name: string; settings: EncoderSettings; createdAt: string } };

export const ENCODER_EVENT_TYPES = ['EncoderCreated'] as const;

export type EncoderState = { readonly status: 'absent' } | { readonly status: 'active'; readonly encoderId: string };

export const encoderFold = {
  initialState: { status: 'absent' } as EncoderState,
  evolve(_state: EncoderState, event: EncoderEvent): EncoderState {
    switch (event.type) {
      case 'EncoderCreated':
        return { status: 'active', encoderId: event.data.encoderId };
      default: {
        const _exhaustive: never = event.type;
        return _exhaustive;
      }
    }
  },
};

/** One stream per name, so a name is registered once; names of configured encoders are refused by the handler. */
export function decideCreateEncoder(state: EncoderState, input: { encoderId: string; name: string; settings: EncoderSettings }, now: Date): EncoderEvent[] {
  if (state.status === 'active') throw conflict('encoder.name_taken', `An encoder named "${input.name}" is already registered`);
  return [{ type: 'EncoderCreated', data: { ...input, createdAt: now.toISOString() } }];
}
