import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { DEFAULT_SETTINGS, knownModel, OnnxModelSettings } from './known-models';

/** Where the graph is looked for when no file is named: a plain export, then sentence-transformers' layout. */
export const GRAPH_CANDIDATES = ['model.onnx', 'onnx/model.onnx'] as const;

/** A graph's path inside a model directory: relative, no `..`, ending in `.onnx` (it may come from an API caller). */
export function isGraphPath(file: string): boolean {
  return /^[\w.-]+(\/[\w.-]+)*\.onnx$/.test(file) && !file.split('/').includes('..');
}

/** A model directory that cannot be used; `problems` name each missing or broken file. */
export class ModelDirError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('; '));
    this.name = 'ModelDirError';
  }
}

/** What a worker needs to run a model directory. */
export interface OnnxModelFiles {
  readonly dir: string;
  readonly modelPath: string;
  readonly tokenizerPath: string;
  /** `tokenizer_config.json`, or `{}` (the tokenizer library reads special-token and case settings from it). */
  readonly tokenizerConfig: Record<string, unknown>;
  /** The model's Hugging Face id when the directory says (`config.json` `_name_or_path`), else the directory's name. */
  readonly modelId: string;
  readonly settings: OnnxModelSettings;
}

function readJson(path: string, problems: string[]): Record<string, unknown> | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const value: unknown = JSON.parse(readFileSync(path, 'utf8'));
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
    problems.push(`${basename(path)} is not a JSON object`);
  } catch (e) {
    problems.push(`${basename(path)} is not valid JSON (${(e as Error).message})`);
  }
  return undefined;
}

const positiveInt = (v: unknown, max: number): number | undefined => (Number.isInteger(v) && (v as number) > 0 && (v as number) <= max ? (v as number) : undefined);

/**
 * Checks a model directory and resolves how to run it. `file`: the graph inside `dir` (e.g. a quantised
 * `onnx/model_quantized.onnx`); `overrides`: settings given explicitly, which win over the directory and the
 * table of known models. Throws `ModelDirError` naming every problem.
 */
export function inspectModelDir(dir: string, options: { readonly file?: string; readonly overrides?: Partial<OnnxModelSettings>; readonly modelId?: string } = {}): OnnxModelFiles {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new ModelDirError([`${dir} is not a directory`]);
  if (options.file !== undefined && !isGraphPath(options.file)) throw new ModelDirError([`file "${options.file}" must be a relative path inside the directory ending in .onnx`]);
  const problems: string[] = [];
  const candidates = options.file ? [options.file] : GRAPH_CANDIDATES;
  const graph = candidates.find((c) => existsSync(join(dir, c)) && statSync(join(dir, c)).isFile());
  if (!graph) problems.push(`no ONNX graph in ${dir} (looked for ${candidates.join(', ')})`);
  const tokenizerPath = join(dir, 'tokenizer.json');
  const tokenizer = readJson(tokenizerPath, problems);
  if (!existsSync(tokenizerPath)) problems.push(`no tokenizer.json in ${dir}`);
  else if (tokenizer && (typeof tokenizer.model !== 'object' || tokenizer.model === null)) problems.push('tokenizer.json has no "model" (it is not a Hugging Face tokenizers file)');
  const tokenizerConfig = readJson(join(dir, 'tokenizer_config.json'), problems) ?? {};
  const config = readJson(join(dir, 'config.json'), problems) ?? {};
  const pooling = readJson(join(dir, '1_Pooling', 'config.json'), problems);
  const sentenceBert = readJson(join(dir, 'sentence_bert_config.json'), problems);
  if (problems.length > 0) throw new ModelDirError(problems);

  const modelId = options.modelId ?? (typeof config._name_or_path === 'string' && config._name_or_path ? config._name_or_path : basename(dir));
  const fromDir: Partial<OnnxModelSettings> = {
    ...(pooling?.pooling_mode_cls_token === true ? { pooling: 'cls' as const } : pooling?.pooling_mode_mean_tokens === true ? { pooling: 'mean' as const } : {}),
    ...(positiveInt(sentenceBert?.max_seq_length, 8192) ? { maxTokens: sentenceBert!.max_seq_length as number } : {}),
  };
  const tokenizerMax = positiveInt(tokenizerConfig.model_max_length, 8192);
  const settings: OnnxModelSettings = {
    ...DEFAULT_SETTINGS,
    ...(tokenizerMax ? { maxTokens: tokenizerMax } : {}),
    ...knownModel(modelId),
    ...fromDir,
    ...definedOnly(options.overrides ?? {}),
  };
  return { dir, modelPath: join(dir, graph!), tokenizerPath, tokenizerConfig, modelId, settings };
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
