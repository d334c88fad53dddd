import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { knownModel } from './known-models';
import { inspectModelDir } from './model-dir';

/** How a directory's settings are resolved: defaults < tokenizer_config < known model < the directory's own files < explicit. */
describe('inspectModelDir settings', () => {
  const root = mkdtempSync(join(tmpdir(), 'model-dir-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const dir = (name: string, files: Record<string, unknown>) => {
    const d = join(root, name);
    for (const [file, content] of Object.entries({ 'model.onnx': 'x', 'tokenizer.json': { model: { type: 'WordPiece' } }, ...files })) {
      mkdirSync(join(d, file, '..'), { recursive: true });
      writeFileSync(join(d, file), typeof content === 'string' ? content : JSON.stringify(content));
    }
    return d;
  };

  it('knows a model by its Hub id or by a directory named after it', () => {
    expect(knownModel('BAAI/bge-small-en-v1.5')).toMatchObject({ pooling: 'cls', queryPrefix: expect.stringContaining('Represent this sentence') });
    expect(knownModel('bge-small-en-v1.5')).toEqual(knownModel('BAAI/bge-small-en-v1.5'));
    expect(knownModel('intfloat/e5-small-v2')).toMatchObject({ queryPrefix: 'query: ', documentPrefix: 'passage: ' });
    expect(knownModel('my-own-model')).toBeUndefined();
  });

  it('takes the model id from config.json, the table over tokenizer_config, the directory over the table, explicit settings over all', () => {
    const bge = dir('a', { 'config.json': { _name_or_path: 'BAAI/bge-small-en-v1.5' }, 'tokenizer_config.json': { model_max_length: 256 } });
    expect(inspectModelDir(bge).settings).toMatchObject({ pooling: 'cls', maxTokens: 256, documentPrefix: '' });
    expect(inspectModelDir(bge).modelId).toBe('BAAI/bge-small-en-v1.5');
    const miniLm = dir('all-MiniLM-L6-v2', { 'tokenizer_config.json': { model_max_length: 512 } });
    expect(inspectModelDir(miniLm).settings).toMatchObject({ pooling: 'mean', maxTokens: 256 });
    const own = dir('b', { 'config.json': { _name_or_path: 'BAAI/bge-small-en-v1.5' }, '1_Pooling/config.json': { pooling_mode_mean_tokens: true }, 'sentence_bert_config.json': { max_seq_length: 128 } });
    expect(inspectModelDir(own).settings).toMatchObject({ pooling: 'mean', maxTokens: 128 });
    expect(inspectModelDir(own, { overrides: { pooling: 'cls', queryPrefix: undefined } }).settings).toMatchObject({ pooling: 'cls', queryPrefix: expect.stringContaining('Represent') });
    // A tokenizer_config's "no limit" (a huge sentinel) is not a length.
    expect(inspectModelDir(dir('c', { 'tokenizer_config.json': { model_max_length: 1e30 } })).settings.maxTokens).toBe(512);
  });

  it('names broken settings files and a graph path that leaves the directory', () => {
    expect(() => inspectModelDir(dir('d', { 'config.json': '{not json' }))).toThrow(/config.json is not valid JSON/);
    expect(() => inspectModelDir(dir('e', {}), { file: '../e/model.onnx' })).toThrow('file "../e/model.onnx" must be a relative path inside the directory ending in .onnx');
  });
});
