/** Which side of a search a text is on: models trained asymmetrically prefix or encode the two differently. */
export type EncodeKind = 'query' | 'document';

/**
 * A text encoder: turns texts into unit-length vectors so that cosine similarity is a dot product.
 * Implementations batch internally; callers may pass any number of texts and get one vector per text, in order.
 */
export interface Encoder {
  /** Stable name a corpus records at creation (`encoder_name`); never reused for a different model. */
  readonly name: string;
  readonly dimensions: number;
  /**
   * How far the reference API's `lexical_interpolation` scale sits above this encoder's similarities: the query
   * side maps λ to the convex lexical weight λ·U / ((1 − λ) + λ·U) (docs/search.md). A weak encoder gets a
   * large unit (the default λ leans on BM25), a strong one a small unit.
   */
  readonly lexicalUnit: number;
  /** Vectors of length `dimensions`, L2-normalised, one per text in the order given. */
  encode(texts: readonly string[], kind: EncodeKind): Promise<Float32Array[]>;
}

/** An encoder as `/v2/encoders` shows it (the reference API's `Encoder` schema). */
export interface EncoderDescriptor {
  /** `enc_<n>`, stable for a given configuration order. */
  readonly id: string;
  readonly name: string;
  /** `built-in` (shipped, runs in this process), `onnx` (a model directory, in this process) or `openai-compatible` (an embeddings endpoint). */
  readonly type: string;
  readonly output_dimensions: number;
  readonly description: string;
  /** Whether a corpus created without `encoder_name` gets this encoder. */
  readonly default: boolean;
  readonly enabled: boolean;
  readonly image_encoding: boolean;
}

/** Injection token of the `EncoderRegistry`. */
export const ENCODER_REGISTRY = Symbol('EncoderRegistry');
