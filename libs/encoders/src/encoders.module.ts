import { DynamicModule, Inject, Module, OnModuleDestroy } from '@nestjs/common';
import { ENCODER_REGISTRY } from './encoder.port';
import type { EncoderConfig } from './encoder-config';
import { EncoderRegistry, RegisteredEncoder } from './encoder-registry';
import { GloveEncoder } from './glove/glove-encoder';
import { OpenAiEmbeddingsEncoder } from './openai/openai-embeddings-encoder';
import { UseLiteEncoder } from './use-lite/use-lite-encoder';

/**
 * Builds the registry of a configuration: the two built-in encoders first (`enc_1` GloVe, the default, best on
 * SciFact; `enc_2` USE lite), then the configured endpoint (`enc_3`).
 */
export function encoderRegistryFor(config: EncoderConfig, outboundFetch?: typeof fetch): { registry: EncoderRegistry; builtIn: UseLiteEncoder } {
  const builtIn = new UseLiteEncoder(config.builtIn);
  const entries: RegisteredEncoder[] = [
    {
      encoder: new GloveEncoder(),
      type: 'built-in',
      description: 'GloVe 6B word vectors (English, 100 dimensions), IDF-weighted average; runs offline inside the service',
    },
    {
      encoder: builtIn,
      type: 'built-in',
      description: 'Universal Sentence Encoder lite (English, 512 dimensions); runs offline inside the service, in worker threads',
    },
  ];
  if (config.openAi) {
    entries.push({
      encoder: new OpenAiEmbeddingsEncoder({ ...config.openAi, fetch: outboundFetch }),
      type: 'openai-compatible',
      description: `Model "${config.openAi.model}" at ${config.openAi.baseUrl}/embeddings`,
    });
  }
  return { registry: new EncoderRegistry(entries, config.defaultEncoder), builtIn };
}

const BUILT_IN = Symbol('BuiltInEncoder');

/** Stops the USE encoder's worker threads with the application. */
class BuiltInEncoderLifecycle implements OnModuleDestroy {
  constructor(@Inject(BUILT_IN) private readonly builtIn: UseLiteEncoder) {}
  async onModuleDestroy(): Promise<void> {
    await this.builtIn.close();
  }
}

/** Text encoders: provides `ENCODER_REGISTRY` for the settings read from the service's environment. */
@Module({})
export class EncodersModule {
  /** `outboundFetch`: the service's guarded HTTP client (the outbound policy), for the configured endpoint. */
  static forRoot(config: EncoderConfig, outboundFetch?: typeof fetch): DynamicModule {
    const { registry, builtIn } = encoderRegistryFor(config, outboundFetch);
    return {
      module: EncodersModule,
      // Global: corpora's command and query handlers embed with the registry's encoders.
      global: true,
      providers: [{ provide: ENCODER_REGISTRY, useValue: registry }, { provide: BUILT_IN, useValue: builtIn }, BuiltInEncoderLifecycle],
      exports: [ENCODER_REGISTRY],
    };
  }
}
