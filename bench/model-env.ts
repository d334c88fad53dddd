import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/** The in-process model variables a bench passes on to the service it starts (docs/encoders.md). */
const MODEL_VARIABLES = /^(ENCODER_MODEL_DIR|RERANKER_MODEL_DIR|ENCODER_MODELS_ROOT|HF_ENDPOINT|ONNX_ENCODER_.+|ONNX_RERANKER_.+)$/;

export interface BenchModels {
  /** Variables for the service's configuration. */
  readonly env: Record<string, string>;
  /** The encoder a corpus is created with when a model directory was given. */
  readonly encoderName?: string;
  /** The reranker a query may name when a cross-encoder directory was given. */
  readonly rerankerName?: string;
}

/**
 * Real models for a bench: `ENCODER_MODEL_DIR` (a sentence-embedding model) and `RERANKER_MODEL_DIR` (a
 * cross-encoder), each an ONNX graph with its tokenizer.json. Prints where each was found, or that none was given.
 */
export function benchModels(env: NodeJS.ProcessEnv = process.env): BenchModels {
  const picked = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => MODEL_VARIABLES.test(e[0]) && !!e[1]));
  const found = (variable: string, what: string): boolean => {
    const dir = picked[variable];
    if (!dir) {
      console.log(`${what}: none given (${variable} is not set)`);
      return false;
    }
    const at = resolve(dir);
    console.log(`${what}: ${existsSync(at) ? `found at ${at}` : `${at} does not exist (the service will refuse to start, naming why)`} (${variable})`);
    return true;
  };
  const encoder = found('ENCODER_MODEL_DIR', 'encoder model');
  const reranker = found('RERANKER_MODEL_DIR', 'reranker model');
  if (encoder) picked.ONNX_ENCODER_NAME ??= 'bench-onnx-encoder';
  if (reranker) picked.ONNX_RERANKER_NAME ??= 'bench-onnx-reranker';
  return { env: picked, encoderName: encoder ? picked.ONNX_ENCODER_NAME : undefined, rerankerName: reranker ? picked.ONNX_RERANKER_NAME : undefined };
}
