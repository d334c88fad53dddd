import { ENCODERS } from '@lib/llms/read-models';
import { EventLog, given, onceAndTwice } from '@lib/testing';
import { encodersProjection } from './encoders.projection';

describe('encoders projection', () => {
  const log = new EventLog();
  const sealed = { v: 1, kid: 'k', iv: 'aXY=', tag: 'dGFn', ct: 'Y3Q=' };
  const settings = { type: 'openai-compatible', description: 'd', uri: 'http://x/v1/embeddings', model: 'm', outputDimensions: 8, sendDimensions: false, auth: { type: 'bearer', identifiers: {}, sealed } };
  log.append('encoder-a', 'EncoderCreated', { encoderId: 'enc_10', name: 'a', settings, createdAt: '2026-01-01T00:00:00.000Z' });
  log.append('encoder-b', 'EncoderCreated', { encoderId: 'enc_11', name: 'b', settings: { ...settings, auth: null }, createdAt: '2026-01-02T00:00:00.000Z' });
  const pinned = { pooling: 'cls', normalize: true, queryPrefix: 'q: ', documentPrefix: '', maxTokens: 512, activation: 'sigmoid' };
  const onnx = { type: 'onnx', description: 'in process', modelDir: '/models/bge', model: 'BAAI/bge-small-en-v1.5', file: 'onnx/model.onnx', settings: pinned, outputDimensions: 384 };
  log.append('encoder-c', 'EncoderCreated', { encoderId: 'enc_12', name: 'c', settings: onnx, createdAt: '2026-01-03T00:00:00.000Z' });

  it('keeps one row per encoder with its ciphertext, never a secret in clear', async () => {
    const harness = await given(log.events).project(encodersProjection);
    expect(await harness.reads.get(ENCODERS, 'enc_10')).toMatchObject({ name: 'a', output_dimensions: 8, auth: { type: 'bearer', sealed }, enabled: true });
    expect(await harness.reads.get(ENCODERS, 'enc_11')).toMatchObject({ name: 'b', auth: null, onnx: null });
    harness.close();
  });

  it('keeps an onnx encoder\'s model directory and its pinned settings', async () => {
    const harness = await given(log.events).project(encodersProjection);
    expect(await harness.reads.get(ENCODERS, 'enc_12')).toMatchObject({
      name: 'c',
      type: 'onnx',
      model: 'BAAI/bge-small-en-v1.5',
      uri: '',
      auth: null,
      output_dimensions: 384,
      onnx: { model_dir: '/models/bge', file: 'onnx/model.onnx', settings: { pooling: 'cls', queryPrefix: 'q: ' } },
    });
    harness.close();
  });

  it('applying every event twice changes nothing', async () => {
    const { once, twice } = await onceAndTwice(encodersProjection, log.events);
    expect(once).toMatchObject({ [ENCODERS]: [{ id: 'enc_10' }, { id: 'enc_11' }, { id: 'enc_12' }] });
    expect(twice).toEqual(once);
  });
});
