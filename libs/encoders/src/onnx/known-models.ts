/**
 * How to run a model's output, as its model card says: a sentence-embedding model's pooling and prefixes, a
 * cross-encoder's activation. Settings given explicitly override these; a directory's own sentence-transformers
 * pooling file (`1_Pooling/config.json`) overrides the table.
 */
export interface OnnxModelSettings {
  /** `cls`: the first token's vector (bge, arctic-embed); `mean`: the average over real tokens (MiniLM, e5, gte). */
  readonly pooling: 'mean' | 'cls';
  /** L2-normalise the pooled vector. Always true for an encoder here (the port promises unit vectors). */
  readonly normalize: boolean;
  /** Put before a query / a document (e5: `query: ` / `passage: `; bge: an instruction before queries only). */
  readonly queryPrefix: string;
  readonly documentPrefix: string;
  /** Tokens a text (or a query and document pair) is cut to, special tokens included. */
  readonly maxTokens: number;
  /** Cross-encoders: `sigmoid` turns a logit into 0–1 (as sentence-transformers' CrossEncoder does), `none` keeps it. */
  readonly activation: 'sigmoid' | 'none';
}

export const DEFAULT_SETTINGS: OnnxModelSettings = { pooling: 'mean', normalize: true, queryPrefix: '', documentPrefix: '', maxTokens: 512, activation: 'sigmoid' };

const BGE_QUERY = 'Represent this sentence for searching relevant passages: ';

/** Keyed by Hugging Face id, lower-cased; a directory is matched by its `config.json` `_name_or_path` or its own name. */
export const KNOWN_MODELS: Readonly<Record<string, Partial<OnnxModelSettings>>> = {
  'baai/bge-small-en-v1.5': { pooling: 'cls', queryPrefix: BGE_QUERY },
  'baai/bge-base-en-v1.5': { pooling: 'cls', queryPrefix: BGE_QUERY },
  'snowflake/snowflake-arctic-embed-xs': { pooling: 'cls', queryPrefix: BGE_QUERY },
  'sentence-transformers/all-minilm-l6-v2': { pooling: 'mean', maxTokens: 256 },
  'intfloat/e5-small-v2': { pooling: 'mean', queryPrefix: 'query: ', documentPrefix: 'passage: ' },
  'intfloat/e5-small': { pooling: 'mean', queryPrefix: 'query: ', documentPrefix: 'passage: ' },
  'thenlper/gte-small': { pooling: 'mean' },
  'baai/bge-reranker-base': { activation: 'sigmoid' },
  'cross-encoder/ms-marco-minilm-l-6-v2': { activation: 'sigmoid' },
};

/** The table's entry for a model id or a directory name (`bge-small-en-v1.5` finds `BAAI/bge-small-en-v1.5`). */
export function knownModel(name: string | undefined): Partial<OnnxModelSettings> | undefined {
  if (!name) return undefined;
  const key = name.toLowerCase().replace(/\/+$/, '');
  if (KNOWN_MODELS[key]) return KNOWN_MODELS[key];
  const last = key.split('/').pop()!;
  return Object.entries(KNOWN_MODELS).find(([id]) => id.split('/').pop() === last)?.[1];
}
