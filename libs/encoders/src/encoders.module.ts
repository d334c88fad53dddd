import { DynamicModule, Inject, Module, OnModuleDestroy } from '@nestjs/common';
import { ENCODER_REGISTRY } from './encoder.port';
import type { EncoderConfig } from './encoder-config';
import { EncoderRegistry, RegisteredEncoder } from './encoder-registry';
import { GloveEncoder } from './glove/glove-encoder';
import { inspectModelDir } from './onnx/model-dir';
import { ModelSource } from './onnx/model-source';
import type { OnnxModelConfig } from './onnx/onnx-config';
import { OnnxCrossEncoder } from './onnx/onnx-cross-encoder';
import { OnnxEncoder } from './onnx/onnx-encoder';
import { OpenAiEmbeddingsEncoder } from './openai/openai-embeddings-encoder';
import { UseLiteEncoder } from './use-lite/use-lite-encoder';

/** Injection token of the `ModelSource` (registered model directories, Hub downloads). */
export const ONNX_MODEL_SOURCE = Symbol('OnnxModelSource');
/** Injection token of the configured ONNX cross-encoder (`OnnxCrossEncoder`), or null when none is configured. */
export const ONNX_RERANKER = Symbol('OnnxReranker');

/** What the encoders module builds: the registry, the in-process models to stop with the application. */
export interface EncoderSetup {
  readonly registry: EncoderRegistry;
  readonly models: ModelSource;
  readonly reranker: OnnxCrossEncoder | null;
  readonly closeables: readonly { close(): Promise<void> }[];
}

/** The model directory of a configured ONNX model: the one given, or the Hub model fetched into the models directory. */
async function modelFiles(models: ModelSource, c: OnnxModelConfig) {
  const dir = c.dir ?? (await models.fromHub(c.model!, c.file));
  return inspectModelDir(dir, { file: c.file, overrides: c.overrides, modelId: c.model });
}

/**
 * Builds the registry of a configuration: the two built-in encoders first (`enc_1` GloVe, the default, best on
 * SciFact; `enc_2` USE lite), then the configured endpoint, then the configured ONNX model. An ONNX model is
 * loaded here, once, to learn its vector length: a graph that does not run stops the service at start.
 */
export async function encoderRegistryFor(config: EncoderConfig, outboundFetch?: typeof fetch): Promise<EncoderSetup> {
  const models = new ModelSource({ ...config.models, fetch: outboundFetch });
  const builtIn = new UseLiteEncoder(config.builtIn);
  const closeables: { close(): Promise<void> }[] = [builtIn];
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
  if (config.onnx) {
    const c = config.onnx;
    const files = await modelFiles(models, c);
    const encoder = await OnnxEncoder.open({ name: c.name, files, lexicalUnit: c.lexicalUnit, ...c.run });
    closeables.push(encoder);
    entries.push({ encoder, type: 'onnx', description: `ONNX model ${files.modelId} (${files.settings.pooling} pooling), run inside the service from ${files.dir}` });
  }
  let reranker: OnnxCrossEncoder | null = null;
  if (config.onnxReranker) {
    const c = config.onnxReranker;
    reranker = new OnnxCrossEncoder(c.name, await modelFiles(models, c), c.run);
    closeables.push(reranker);
    await reranker.load();
  }
  return { registry: new EncoderRegistry(entries, config.defaultEncoder), models, reranker, closeables };
}

const SETUP = Symbol('EncoderSetup');

/** Stops the in-process models' worker threads with the application. */
class InProcessModelsLifecycle implements OnModuleDestroy {
  constructor(@Inject(SETUP) private readonly setup: EncoderSetup) {}
  async onModuleDestroy(): Promise<void> {
    await Promise.all(this.setup.closeables.map((c) => c.close()));
  }
}

/** Text encoders: provides `ENCODER_REGISTRY` for the settings read from the service's environment. */
@Module({})
export class EncodersModule {
  /** `outboundFetch`: the service's guarded HTTP client (the outbound policy), for the configured endpoint and Hub downloads. */
  static forRoot(config: EncoderConfig, outboundFetch?: typeof fetch): DynamicModule {
    return {
      module: EncodersModule,
      // Global: corpora's command and query handlers embed with the registry's encoders.
      global: true,
      providers: [
        { provide: SETUP, useFactory: () => encoderRegistryFor(config, outboundFetch) },
        { provide: ENCODER_REGISTRY, useFactory: (s: EncoderSetup) => s.registry, inject: [SETUP] },
        { provide: ONNX_MODEL_SOURCE, useFactory: (s: EncoderSetup) => s.models, inject: [SETUP] },
        { provide: ONNX_RERANKER, useFactory: (s: EncoderSetup) => s.reranker, inject: [SETUP] },
        InProcessModelsLifecycle,
      ],
      exports: [ENCODER_REGISTRY, ONNX_MODEL_SOURCE, ONNX_RERANKER],
    };
  }
}
