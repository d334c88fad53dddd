import { basename, resolve } from 'node:path';
import type { OnnxModelSettings } from './known-models';
import { inspectModelDir, ModelDirError } from './model-dir';
import type { OnnxRunOptions } from './onnx-model';
import { ModelSource } from './model-source';

/** An in-process ONNX model of the configuration: a directory, or a Hub id fetched into the models directory. */
export interface OnnxModelConfig {
  /** The name corpora (encoder) or queries (reranker) choose it by. */
  readonly name: string;
  readonly dir?: string;
  /** A Hugging Face id: which model `dir` holds (for the table of known models), or, without `dir`, what to fetch. */
  readonly model?: string;
  /** The graph inside the directory, when not `model.onnx` or `onnx/model.onnx`. */
  readonly file?: string;
  readonly overrides: Partial<OnnxModelSettings>;
  readonly run: OnnxRunOptions;
  readonly lexicalUnit?: number;
}

/** Where models are kept and fetched from. */
export interface ModelsConfig {
  /** ENCODER_MODELS_ROOT, default `<DATA_DIR>/models`. */
  readonly modelsRoot: string;
  /** HF_ENDPOINT, default `https://huggingface.co`. */
  readonly hubEndpoint: string;
}

type Reader = {
  text: (name: string) => string | undefined;
  int: (name: string, min: number, max: number) => number | undefined;
  problems: string[];
  env: Record<string, string | undefined>;
};

export function readModelsConfig({ text }: Reader): ModelsConfig {
  return { modelsRoot: resolve(text('ENCODER_MODELS_ROOT') ?? resolve(text('DATA_DIR') ?? './data', 'models')), hubEndpoint: text('HF_ENDPOINT') ?? 'https://huggingface.co' };
}

/**
 * Reads one in-process model's variables: `<DIR_VAR>` (a directory) or `<PREFIX>_MODEL` alone (a Hub id), and
 * `<PREFIX>_{NAME,FILE,POOLING,QUERY_PREFIX,DOCUMENT_PREFIX,MAX_TOKENS,THREADS,INTRA_OP_THREADS,BATCH_SIZE}`.
 * A directory is checked now, so a missing graph or tokenizer stops the service at start, named.
 */
export function readOnnxModelConfig(r: Reader, dirVar: string, prefix: string, fallbackName: string): OnnxModelConfig | undefined {
  const { text, int, problems, env } = r;
  const dir = text(dirVar);
  const model = text(`${prefix}_MODEL`);
  if (dir === undefined && model === undefined) return undefined;
  if (dir === undefined && !ModelSource.isHubId(model!)) problems.push(`${prefix}_MODEL must be a Hugging Face model id such as BAAI/bge-small-en-v1.5, got "${model}"`);
  const pooling = text(`${prefix}_POOLING`);
  if (pooling !== undefined && pooling !== 'mean' && pooling !== 'cls') problems.push(`${prefix}_POOLING must be mean or cls, got "${pooling}"`);
  const file = text(`${prefix}_FILE`);
  const overrides: Partial<OnnxModelSettings> = {
    pooling: pooling === 'mean' || pooling === 'cls' ? pooling : undefined,
    queryPrefix: env[`${prefix}_QUERY_PREFIX`],
    documentPrefix: env[`${prefix}_DOCUMENT_PREFIX`],
    maxTokens: int(`${prefix}_MAX_TOKENS`, 2, 8192),
  };
  if (dir !== undefined) {
    try {
      inspectModelDir(resolve(dir), { file, overrides, modelId: model });
    } catch (e) {
      if (!(e instanceof ModelDirError)) throw e;
      problems.push(...e.problems.map((p) => `${dirVar}: ${p}`));
    }
  }
  const defaultName = (model ?? basename(resolve(dir!))).split('/').pop()!.toLowerCase() || fallbackName;
  return {
    name: text(`${prefix}_NAME`) ?? defaultName,
    dir: dir === undefined ? undefined : resolve(dir),
    model,
    file,
    overrides,
    run: { threads: int(`${prefix}_THREADS`, 1, 16), intraOpThreads: int(`${prefix}_INTRA_OP_THREADS`, 1, 64), batchSize: int(`${prefix}_BATCH_SIZE`, 1, 256) },
    lexicalUnit: int(`${prefix}_LEXICAL_UNIT`, 1, 1_000_000),
  };
}
