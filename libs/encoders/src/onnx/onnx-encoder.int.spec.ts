import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTinyEncoder } from '@lib/testing';
import type { ModelThread } from '../model-thread';
import { dot } from '../vectors';
import { inspectModelDir, ModelDirError } from './model-dir';
import { OnnxEncoder } from './onnx-encoder';
import type { OnnxModel } from './onnx-model';

/**
 * The onnx encoder on a tiny BERT-shaped graph written by the test: "otter" and "lutra" share a direction, "kelp"
 * has its own, "[CLS]" its own, every other token is zero. Each expected vector follows from that by hand.
 */
const WORDS = ['otter', 'lutra', 'kelp', 'tide', 'the', '##s'];
const ROWS: Record<string, number[]> = { otter: [1, 0, 0], lutra: [1, 0, 0], kelp: [0, 1, 0], tide: [0, 0, 1], '[CLS]': [0, 0, 0.5] };
const vector = (w: string) => ROWS[w] ?? [0, 0, 0];

describe('OnnxEncoder (an ONNX graph and tokenizer.json, in worker threads)', () => {
  const root = mkdtempSync(join(tmpdir(), 'onnx-encoder-'));
  const dir = (name: string, files?: Record<string, unknown>, modelPath?: string) => writeTinyEncoder({ dir: join(root, name), words: WORDS, dimensions: 3, vector, files, modelPath });
  const open: OnnxEncoder[] = [];
  const encoderOf = async (path: string, options: Partial<Parameters<typeof OnnxEncoder.open>[0]> = {}, overrides = {}) => {
    const e = await OnnxEncoder.open({ name: 'tiny', files: inspectModelDir(path, { overrides }), ...options });
    open.push(e);
    return e;
  };
  afterAll(async () => {
    await Promise.all(open.map((e) => e.close()));
    rmSync(root, { recursive: true, force: true });
  });
  const rounded = (v: Float32Array) => Array.from(v, (x) => Math.round(x * 1e4) / 1e4);

  it('loads a sentence-transformers layout (onnx/model.onnx), learns the length, and mean-pools over real tokens only', async () => {
    const encoder = await encoderOf(dir('mean', {}, 'onnx/model.onnx'));
    expect(encoder.dimensions).toBe(3);
    // [CLS] otter kelp [SEP]: (0,0,0.5) + (1,0,0) + (0,1,0) + 0 → (1,1,0.5)/1.5; padding in a batch changes nothing.
    const [alone] = await encoder.encode(['Otter kelp'], 'document');
    const [, padded] = await encoder.encode(['the otter the kelp tide the the the', 'Otter kelp'], 'document');
    const expected = [1, 1, 0.5].map((x) => Math.round((x / 1.5) * 1e4) / 1e4);
    expect(rounded(alone)).toEqual(expected);
    expect(rounded(padded)).toEqual(expected);
    expect(dot(alone, alone)).toBeCloseTo(1, 5);
  });

  it('finds a synonym by meaning: a query for "lutra" is nearest the otter text', async () => {
    const encoder = await encoderOf(dir('synonyms'));
    const [q] = await encoder.encode(['lutra'], 'query');
    const [otter, kelp] = await encoder.encode(['The otters', 'The kelp'], 'document');
    expect(dot(q, otter)).toBeGreaterThan(dot(q, kelp) + 0.3);
  });

  it('pools as the directory says (1_Pooling/config.json: CLS) and prefixes queries as the settings say', async () => {
    const cls = await encoderOf(dir('cls', { '1_Pooling/config.json': { pooling_mode_cls_token: true } }));
    expect(cls.files.settings.pooling).toBe('cls');
    const [v] = await cls.encode(['otter kelp tide'], 'document');
    expect(rounded(v)).toEqual([0, 0, 1]);
    const prefixed = await encoderOf(dir('prefixed'), {}, { queryPrefix: 'kelp ' });
    const [q] = await prefixed.encode(['otter'], 'query');
    const [d] = await prefixed.encode(['otter'], 'document');
    expect(rounded(q)).not.toEqual(rounded(d));
    expect(Array.from(q)[1]).toBeGreaterThan(0);
    expect(Array.from(d)[1]).toBe(0);
  });

  it('cuts a text to maxTokens, keeping the closing token', async () => {
    const encoder = await encoderOf(dir('short'), {}, { maxTokens: 3 });
    const [long] = await encoder.encode(['otter kelp kelp kelp'], 'document');
    const [cut] = await encoder.encode(['otter'], 'document');
    expect(rounded(long)).toEqual(rounded(cut));
  });

  it('batches across threads and keeps each text with its vector, in order', async () => {
    const encoder = await encoderOf(dir('pool'), { threads: 2, batchSize: 3 });
    const texts = Array.from({ length: 20 }, (_, i) => ['otter', 'kelp', 'tide', 'otter kelp', 'the'][i % 5] + ' the'.repeat(i));
    const together = await encoder.encode(texts, 'document');
    const oneByOne = [];
    for (const t of texts) oneByOne.push((await encoder.encode([t], 'document'))[0]);
    expect(together.map(rounded)).toEqual(oneByOne.map(rounded));
  });

  it('replaces a worker that died instead of waiting on it forever', async () => {
    const encoder = await encoderOf(dir('dies'));
    const [before] = await encoder.encode(['tide'], 'query');
    const model = (encoder as unknown as { model: OnnxModel }).model;
    await (model as unknown as { threads: ModelThread[] }).threads[0].terminate();
    const [after] = await encoder.encode(['tide'], 'query');
    expect(rounded(after)).toEqual(rounded(before));
  });

  it('refuses vectors of another length than the one recorded (a model swapped after registration)', async () => {
    const swapped = new OnnxEncoder({ name: 'swapped', files: inspectModelDir(dir('swapped')) }, 5);
    open.push(swapped);
    await expect(swapped.encode(['otter'], 'document')).rejects.toMatchObject({ code: 'encoder.failed', message: expect.stringContaining('the model gave 3 numbers per text, not 5') });
  });

  it('names what is missing or broken in a model directory', async () => {
    expect(() => inspectModelDir(join(root, 'nowhere'))).toThrow(`${join(root, 'nowhere')} is not a directory`);
    const bare = dir('bare');
    rmSync(join(bare, 'model.onnx'));
    rmSync(join(bare, 'tokenizer.json'));
    let problems: readonly string[] = [];
    try {
      inspectModelDir(bare);
    } catch (e) {
      problems = (e as ModelDirError).problems;
    }
    expect(problems).toEqual([`no ONNX graph in ${bare} (looked for model.onnx, onnx/model.onnx)`, `no tokenizer.json in ${bare}`]);
    const garbage = dir('garbage');
    writeFileSync(join(garbage, 'model.onnx'), 'not a protobuf');
    await expect(OnnxEncoder.open({ name: 'g', files: inspectModelDir(garbage) })).rejects.toThrow(/protobuf|parsing|load/i);
  });
});
