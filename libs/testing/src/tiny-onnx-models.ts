import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { onnx } from 'onnx-proto';

/**
 * Tiny models written here with the ONNX protobuf definitions, so the onnx encoder and reranker are tested on a
 * real graph run by onnxruntime without downloading one: a BERT-shaped embedding model (ids → one vector per
 * token, `last_hidden_state`, pooled by the caller as a sentence-transformer's pooling layer does) and a
 * cross-encoder (ids → one logit per pair). Their words and what they mean are chosen by the test.
 */

const SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]'];

/** A BERT WordPiece `tokenizer.json` (lower-casing normaliser, BERT pre-tokenizer, `[CLS] a [SEP] b [SEP]`). */
export function tinyTokenizerJson(words: readonly string[]): Record<string, unknown> {
  const vocab = Object.fromEntries([...SPECIAL, ...words].map((w, i) => [w, i]));
  const special = (content: string, id: number) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map((t, i) => special(t, i)),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: { '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] } },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
}

const int64Input = (name: string): onnx.IValueInfoProto => ({
  name,
  type: { tensorType: { elemType: onnx.TensorProto.DataType.INT64, shape: { dim: [{ dimParam: 'batch' }, { dimParam: 'sequence' }] } } },
});
const floatOutput = (name: string, dims: onnx.TensorShapeProto.IDimension[]): onnx.IValueInfoProto => ({
  name,
  type: { tensorType: { elemType: onnx.TensorProto.DataType.FLOAT, shape: { dim: dims } } },
});
const floatTensor = (name: string, dims: number[], values: number[]): onnx.ITensorProto => ({ name, dims, dataType: onnx.TensorProto.DataType.FLOAT, floatData: values });

function modelBytes(graph: onnx.IGraphProto): Uint8Array {
  return onnx.ModelProto.encode({ irVersion: 8, producerName: 'tiny-onnx-models', opsetImport: [{ domain: '', version: 13 }], graph }).finish();
}

/** The vocabulary's rows, special tokens first (`[PAD]`, `[UNK]`, `[CLS]`, `[SEP]`): `row` is asked for those too. */
function table(words: readonly string[], row: (word: string) => number[], width: number): number[] {
  return [...SPECIAL, ...words].map((w) => {
    const r = row(w);
    if (r.length !== width) throw new Error(`row of "${w}" has ${r.length} numbers, not ${width}`);
    return r;
  }).flat();
}

export interface TinyModelOptions {
  readonly dir: string;
  readonly words: readonly string[];
  /** Extra files in the directory (`tokenizer_config.json`, `config.json`, …). */
  readonly files?: Readonly<Record<string, unknown>>;
  /** Where the graph goes inside `dir` (sentence-transformer exports use `onnx/model.onnx`). */
  readonly modelPath?: string;
}

/** An embedding model: `last_hidden_state[b, s] = vector(token of input_ids[b, s])`, `dimensions` wide. */
export function writeTinyEncoder(options: TinyModelOptions & { readonly vector: (word: string) => number[]; readonly dimensions: number }): string {
  const graph: onnx.IGraphProto = {
    name: 'tiny-encoder',
    initializer: [floatTensor('embeddings', [SPECIAL.length + options.words.length, options.dimensions], table(options.words, options.vector, options.dimensions))],
    node: [{ opType: 'Gather', input: ['embeddings', 'input_ids'], output: ['last_hidden_state'], attribute: [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 0 }] }],
    // Real BERT exports take all three; the attention mask and segment ids only matter to the pooling here.
    input: [int64Input('input_ids'), int64Input('attention_mask'), int64Input('token_type_ids')],
    output: [floatOutput('last_hidden_state', [{ dimParam: 'batch' }, { dimParam: 'sequence' }, { dimValue: options.dimensions }])],
  };
  return writeModelDir(options, graph);
}

/** A cross-encoder: `logits[b, 0]` = the sum of `weight(word)` over the pair's unmasked tokens. */
export function writeTinyCrossEncoder(options: TinyModelOptions & { readonly weight: (word: string) => number }): string {
  const graph: onnx.IGraphProto = {
    name: 'tiny-cross-encoder',
    initializer: [
      floatTensor('weights', [SPECIAL.length + options.words.length, 1], table(options.words, (w) => [options.weight(w)], 1)),
      { name: 'last_axis', dims: [1], dataType: onnx.TensorProto.DataType.INT64, int64Data: [2] },
      { name: 'sequence_axis', dims: [1], dataType: onnx.TensorProto.DataType.INT64, int64Data: [1] },
    ],
    node: [
      { opType: 'Gather', input: ['weights', 'input_ids'], output: ['per_token'], attribute: [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 0 }] },
      { opType: 'Cast', input: ['attention_mask'], output: ['mask_f'], attribute: [{ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: onnx.TensorProto.DataType.FLOAT }] },
      { opType: 'Unsqueeze', input: ['mask_f', 'last_axis'], output: ['mask_3d'] },
      { opType: 'Mul', input: ['per_token', 'mask_3d'], output: ['masked'] },
      { opType: 'ReduceSum', input: ['masked', 'sequence_axis'], output: ['logits'], attribute: [{ name: 'keepdims', type: onnx.AttributeProto.AttributeType.INT, i: 0 }] },
    ],
    input: [int64Input('input_ids'), int64Input('attention_mask'), int64Input('token_type_ids')],
    output: [floatOutput('logits', [{ dimParam: 'batch' }, { dimValue: 1 }])],
  };
  return writeModelDir(options, graph);
}

function writeModelDir(options: TinyModelOptions, graph: onnx.IGraphProto): string {
  const modelPath = join(options.dir, options.modelPath ?? 'model.onnx');
  mkdirSync(dirname(modelPath), { recursive: true });
  writeFileSync(modelPath, modelBytes(graph));
  writeFileSync(join(options.dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson(options.words)));
  for (const [name, content] of Object.entries(options.files ?? {})) {
    mkdirSync(dirname(join(options.dir, name)), { recursive: true });
    writeFileSync(join(options.dir, name), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return options.dir;
}
