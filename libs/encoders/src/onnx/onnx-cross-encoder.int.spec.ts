import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTinyCrossEncoder } from '@lib/testing';
import { inspectModelDir, ModelDirError } from './model-dir';
import { ModelSource } from './model-source';
import { OnnxCrossEncoder } from './onnx-cross-encoder';

/** The cross-encoder on a tiny graph: its logit is the sum of +2 per "kelp" and −1 per "otter" over query and text. */
const WORDS = ['otter', 'kelp', 'the'];
const weight = (w: string) => ({ kelp: 2, otter: -1 })[w] ?? 0;
const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

describe('OnnxCrossEncoder and where models come from', () => {
  const root = mkdtempSync(join(tmpdir(), 'onnx-rr-'));
  const open: OnnxCrossEncoder[] = [];
  const rerankerOf = (name: string, overrides = {}, batchSize?: number) => {
    const r = new OnnxCrossEncoder(name, inspectModelDir(writeTinyCrossEncoder({ dir: join(root, name), words: WORDS, weight }), { overrides }), { batchSize });
    open.push(r);
    return r;
  };
  afterAll(async () => {
    await Promise.all(open.map((r) => r.close()));
    rmSync(root, { recursive: true, force: true });
  });

  it('scores each pair read together, through the model\'s sigmoid, in the order given, across batches', async () => {
    const scores = await rerankerOf('plain', {}, 2).score('otter', ['kelp', 'otter', 'the kelp kelp', 'nothing known']);
    expect(scores.map((s) => s.toFixed(5))).toEqual([sigmoid(1), sigmoid(-2), sigmoid(3), sigmoid(-1)].map((s) => s.toFixed(5)));
    expect(await rerankerOf('empty').score('otter', [])).toEqual([]);
  });

  it('cuts the document, never the query, to fit maxTokens; activation "none" keeps the logit', async () => {
    const reranker = rerankerOf('short', { maxTokens: 7, activation: 'none' });
    // [CLS] otter kelp [SEP] + 2 document tokens + [SEP] = 7: the query's +1 survives; only two "kelp" of the text count.
    const [long] = await reranker.score('otter kelp', [Array(50).fill('kelp').join(' ')]);
    expect(long).toBeCloseTo(1 + 4, 5);
  });

  it('fails naming the graph when the model does not load', async () => {
    const dir = writeTinyCrossEncoder({ dir: join(root, 'broken'), words: WORDS, weight });
    writeFileSync(join(dir, 'model.onnx'), 'garbage');
    const reranker = new OnnxCrossEncoder('broken', inspectModelDir(dir));
    await expect(reranker.score('q', ['t'])).rejects.toMatchObject({ code: 'reranker.load_failed', message: expect.stringContaining(join(dir, 'model.onnx')) });
  });

  it('names every URL tried when the Hub cannot be reached, and keeps no half-fetched model', async () => {
    // A port that was free a moment ago: nothing listens there.
    const server: Server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const up = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await new Promise((r) => server.close(r));
    const unreachable = new ModelSource({ modelsRoot: root, hubEndpoint: up });
    const error = await unreachable.fromHub('BAAI/bge-small-en-v1.5').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelDirError);
    expect((error as Error).message).toBe(`could not fetch BAAI/bge-small-en-v1.5 from the Hugging Face Hub: ${up}/BAAI/bge-small-en-v1.5/resolve/main/onnx/model.onnx: ECONNREFUSED; ${up}/BAAI/bge-small-en-v1.5/resolve/main/model.onnx: ECONNREFUSED`);
    expect(readdirSync(root)).not.toContain('BAAI');
  });
});
