import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { GRAPH_CANDIDATES, isGraphPath, ModelDirError } from './model-dir';

/** Where model directories come from: a root they must sit under when registered, and the Hugging Face Hub. */
export interface ModelSourceOptions {
  /** Registered encoders' `model_dir` must lie inside it; models fetched from the Hub are cached in it. */
  readonly modelsRoot: string;
  /** `HF_ENDPOINT`, default `https://huggingface.co`. */
  readonly hubEndpoint: string;
  readonly fetch?: typeof fetch;
}

/** A Hub id, `owner/name`: nothing that could climb out of the cache directory. */
const HUB_ID = /^[A-Za-z0-9][\w.-]*\/[A-Za-z0-9][\w.-]*$/;
/** What a sentence-transformers repository holds besides the graph; each is optional. */
const OPTIONAL_FILES = ['config.json', 'tokenizer_config.json', 'sentence_bert_config.json', '1_Pooling/config.json'];
const FETCH_TIMEOUT_MS = 600_000;

export class ModelSource {
  constructor(readonly options: ModelSourceOptions) {}

  /**
   * A registered model directory, relative to the models root or absolute inside it. An API caller names a
   * directory on the server: confining it to one root keeps the API from probing the rest of the filesystem.
   */
  registeredDir(modelDir: string): string {
    const root = resolve(this.options.modelsRoot);
    const dir = resolve(root, modelDir);
    const inside = relative(root, dir);
    if (inside.startsWith('..') || isAbsolute(inside)) throw new ModelDirError([`${modelDir} is not inside the models directory ${root} (ENCODER_MODELS_ROOT)`]);
    return dir;
  }

  /** Whether `id` is a Hub id this source can fetch. */
  static isHubId(id: string): boolean {
    return HUB_ID.test(id) && !id.includes('..');
  }

  /**
   * The cached directory of a Hub model, fetched on first use: the graph (`file`, else `onnx/model.onnx`, else
   * `model.onnx`), `tokenizer.json` and the small settings files. Written to a scratch directory and renamed, so
   * a half-fetched model is never used. Throws `ModelDirError` naming each URL tried and why it failed.
   */
  async fromHub(id: string, file?: string): Promise<string> {
    if (!ModelSource.isHubId(id)) throw new ModelDirError([`"${id}" is not a Hugging Face model id (owner/name)`]);
    if (file !== undefined && !isGraphPath(file)) throw new ModelDirError([`file "${file}" must be a relative path inside the repository ending in .onnx`]);
    const dir = join(resolve(this.options.modelsRoot), id);
    if (existsSync(join(dir, 'tokenizer.json'))) return dir;
    const scratch = `${dir}.partial-${process.pid}-${Date.now()}`;
    const tried: string[] = [];
    try {
      const graphs = file ? [file] : [...GRAPH_CANDIDATES].reverse();
      let graph: string | undefined;
      for (const candidate of graphs) {
        if (await this.fetchTo(id, candidate, scratch, tried)) {
          graph = candidate;
          break;
        }
      }
      const tokenizer = graph !== undefined && (await this.fetchTo(id, 'tokenizer.json', scratch, tried));
      if (!graph || !tokenizer) throw new ModelDirError([`could not fetch ${id} from the Hugging Face Hub: ${tried.join('; ')}`]);
      for (const optional of OPTIONAL_FILES) await this.fetchTo(id, optional, scratch, []);
      mkdirSync(dirname(dir), { recursive: true });
      try {
        renameSync(scratch, dir);
      } catch (e) {
        // Another registration fetched the same model meanwhile: its complete copy is as good as ours.
        if (!existsSync(join(dir, 'tokenizer.json'))) throw e;
      }
      return dir;
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }

  /** Fetches one file of a Hub repository into `dir`; false (with the reason in `tried`) when it cannot. */
  private async fetchTo(id: string, path: string, dir: string, tried: string[]): Promise<boolean> {
    const url = `${this.options.hubEndpoint.replace(/\/+$/, '')}/${id}/resolve/main/${path}`;
    try {
      const res = await (this.options.fetch ?? fetch)(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
      if (!res.ok) {
        tried.push(`${url} answered ${res.status}`);
        return false;
      }
      const bytes = new Uint8Array(await res.arrayBuffer());
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), bytes);
      return true;
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      tried.push(`${url}: ${cause?.code ?? cause?.message ?? (e as Error).message}`);
      return false;
    }
  }
}
