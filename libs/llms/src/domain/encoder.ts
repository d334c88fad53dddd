import { conflict } from '@lib/platform/kernel';
import type { StoredAuth } from './auth';

/**
 * An embedding endpoint registered through `POST /v2/encoders` (docs/encoders.md): a named encoder corpora may
 * choose, beside those of the configuration. Its credentials are sealed like a model's (`StoredAuth`).
 */
export interface EncoderSettings {
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
