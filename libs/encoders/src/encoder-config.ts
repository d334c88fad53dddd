import { ConfigError } from '@lib/platform';
import { ModelsConfig, OnnxModelConfig, readModelsConfig, readOnnxModelConfig } from './onnx/onnx-config';
import type { OpenAiEncoderOptions } from './openai/openai-embeddings-encoder';
import type { UseLiteOptions } from './use-lite/use-lite-encoder';

/** Encoders of this process, read from the environment (docs/encoders.md lists the variables). */
export interface EncoderConfig {
  /** Options of the USE lite encoder (the GloVe one has none). */
  readonly builtIn: UseLiteOptions;
  /** Present when `OPENAI_ENCODER_URL` is set. */
  readonly openAi?: OpenAiEncoderOptions;
  /** Name of the encoder a corpus gets when it names none; default `glove-6b-100d`. */
  readonly defaultEncoder?: string;
  /** An in-process ONNX sentence encoder: `ENCODER_MODEL_DIR`, or `ONNX_ENCODER_MODEL` (a Hub id) alone. */
  readonly onnx?: OnnxModelConfig;
  /** An in-process ONNX cross-encoder for the `customer_reranker`: `RERANKER_MODEL_DIR` or `ONNX_RERANKER_MODEL`. */
  readonly onnxReranker?: OnnxModelConfig;
  /** Where registered model directories must lie and Hub models are cached. */
  readonly models: ModelsConfig;
}

type Env = Record<string, string | undefined>;

export function loadEncoderConfig(env: Env = process.env): EncoderConfig {
  const problems: string[] = [];
  const text = (name: string): string | undefined => (env[name]?.trim() ? env[name]!.trim() : undefined);
  const int = (name: string, min: number, max: number): number | undefined => {
    const raw = text(name);
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (Number.isInteger(n) && n >= min && n <= max) return n;
    problems.push(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    return undefined;
  };
  const builtIn: UseLiteOptions = {
    threads: int('BUILTIN_ENCODER_THREADS', 1, 16),
    batchSize: int('BUILTIN_ENCODER_BATCH_SIZE', 1, 256),
    maxChars: int('BUILTIN_ENCODER_MAX_CHARS', 100, 100_000),
  };
  let openAi: OpenAiEncoderOptions | undefined;
  const baseUrl = text('OPENAI_ENCODER_URL');
  if (baseUrl !== undefined) {
    if (!/^https?:\/\/[^\s]+$/.test(baseUrl)) problems.push(`OPENAI_ENCODER_URL must be an http(s) URL such as https://api.openai.com/v1, got "${baseUrl}"`);
    const model = text('OPENAI_ENCODER_MODEL');
    const dimensions = int('OPENAI_ENCODER_DIMENSIONS', 1, 65_536);
    if (!model) problems.push('OPENAI_ENCODER_MODEL is required when OPENAI_ENCODER_URL is set');
    if (dimensions === undefined && !problems.some((p) => p.startsWith('OPENAI_ENCODER_DIMENSIONS'))) {
      problems.push('OPENAI_ENCODER_DIMENSIONS is required when OPENAI_ENCODER_URL is set (the length of the vectors the model returns)');
    }
    openAi = {
      name: text('OPENAI_ENCODER_NAME') ?? 'openai-text-encoder',
      baseUrl,
      model: model ?? '',
      dimensions: dimensions ?? 0,
      apiKey: text('OPENAI_ENCODER_API_KEY'),
      timeoutMs: int('OPENAI_ENCODER_TIMEOUT_MS', 100, 600_000),
      batchSize: int('OPENAI_ENCODER_BATCH_SIZE', 1, 2048),
      queryPrefix: env.OPENAI_ENCODER_QUERY_PREFIX,
      documentPrefix: env.OPENAI_ENCODER_DOCUMENT_PREFIX,
      sendDimensions: text('OPENAI_ENCODER_SEND_DIMENSIONS') === 'true',
      lexicalUnit: int('OPENAI_ENCODER_LEXICAL_UNIT', 1, 1_000_000),
    };
  }
  const reader = { text, int, problems, env };
  const onnx = readOnnxModelConfig(reader, 'ENCODER_MODEL_DIR', 'ONNX_ENCODER', 'onnx-text-encoder');
  const onnxReranker = readOnnxModelConfig(reader, 'RERANKER_MODEL_DIR', 'ONNX_RERANKER', 'onnx-reranker');
  if (problems.length > 0) throw new ConfigError(problems);
  return { builtIn, openAi, defaultEncoder: text('DEFAULT_ENCODER'), onnx, onnxReranker, models: readModelsConfig(reader) };
}
