import { relative } from 'node:path';
import { inspectModelDir, ModelDirError, ModelSource, OnnxEncoder, OnnxModelFiles, OnnxModelSettings } from '@lib/encoders';
import { invalid } from '@lib/platform';
import type { OnnxEncoderSettings } from '../../domain/encoder';

/** A registration of an in-process ONNX model (`type: onnx`), as the API gives it. */
export interface OnnxEncoderInput {
  readonly type: 'onnx';
  readonly name: string;
  readonly description: string;
  /** A directory inside the models root (relative to it, or absolute). */
  readonly modelDir?: string;
  /** A Hugging Face id: fetched into the models root when no `modelDir` is given; else which model the directory holds. */
  readonly model?: string;
  readonly file?: string;
  readonly overrides: Partial<OnnxModelSettings>;
  readonly outputDimensions?: number;
}

/**
 * Finds the model (the directory, or the Hub), checks its files, and runs it once: the settings a corpus will
 * embed with, or a 400 naming the field and what is missing or broken. Nothing is stored on a failure.
 */
export async function onnxEncoderSettings(models: ModelSource, input: OnnxEncoderInput): Promise<OnnxEncoderSettings> {
  const field = input.modelDir !== undefined ? 'model_dir' : 'model';
  const refuse = (why: string) => invalid('encoder.model_invalid', `Invalid ${field}: ${why}`, { [field]: why });
  if (input.modelDir === undefined && input.model === undefined) {
    throw invalid('encoder.model_missing', 'An onnx encoder needs model_dir (a directory inside the models root) or model (a Hugging Face id)', { model_dir: 'required when model is not given' });
  }
  let files: OnnxModelFiles;
  try {
    const dir = input.modelDir !== undefined ? models.registeredDir(input.modelDir) : await models.fromHub(input.model!, input.file);
    files = inspectModelDir(dir, { file: input.file, overrides: input.overrides, modelId: input.model });
  } catch (e) {
    if (e instanceof ModelDirError) throw refuse(e.message);
    throw e;
  }
  let dimensions: number;
  try {
    dimensions = (await OnnxEncoder.open({ name: input.name, files })).dimensions;
  } catch (e) {
    throw refuse(`${files.modelPath} does not load with ${files.tokenizerPath}: ${(e as Error).message}`);
  }
  if (input.outputDimensions !== undefined && input.outputDimensions !== dimensions) {
    const why = `the model gives ${dimensions} dimensions, not the ${input.outputDimensions} asked for`;
    throw invalid('encoder.dimensions_mismatch', `Invalid output_dimensions: ${why}`, { output_dimensions: why });
  }
  const { pooling, normalize, queryPrefix, documentPrefix, maxTokens, activation } = files.settings;
  return {
    type: 'onnx',
    description: input.description,
    modelDir: files.dir,
    model: input.model ?? null,
    file: relative(files.dir, files.modelPath),
    settings: { pooling, normalize, queryPrefix, documentPrefix, maxTokens, activation },
    outputDimensions: dimensions,
  };
}
