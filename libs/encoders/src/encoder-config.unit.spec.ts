import { ConfigError } from '@lib/platform';
import { loadEncoderConfig } from './encoder-config';

describe('loadEncoderConfig', () => {
  it('needs nothing: the built-in encoder alone, with its defaults', () => {
    expect(loadEncoderConfig({ DATA_DIR: '/srv/data' })).toEqual({
      builtIn: { threads: undefined, batchSize: undefined, maxChars: undefined },
      openAi: undefined,
      defaultEncoder: undefined,
      onnx: undefined,
      onnxReranker: undefined,
      models: { modelsRoot: '/srv/data/models', hubEndpoint: 'https://huggingface.co' },
    });
  });

  it('reads in-process ONNX models: a Hub id alone is fetched, named after the model, with its settings', () => {
    const c = loadEncoderConfig({ ONNX_ENCODER_MODEL: 'BAAI/bge-small-en-v1.5', ONNX_ENCODER_POOLING: 'mean', ONNX_ENCODER_THREADS: '2', ONNX_RERANKER_MODEL: 'BAAI/bge-reranker-base', ONNX_RERANKER_NAME: 'rr', HF_ENDPOINT: 'http://mirror' });
    expect(c.onnx).toMatchObject({ name: 'bge-small-en-v1.5', model: 'BAAI/bge-small-en-v1.5', dir: undefined, overrides: { pooling: 'mean' }, run: { threads: 2 } });
    expect(c.onnxReranker).toMatchObject({ name: 'rr', model: 'BAAI/bge-reranker-base' });
    expect(c.models.hubEndpoint).toBe('http://mirror');
  });

  it('stops the start naming a model directory that is not there, a bad Hub id and a bad pooling', () => {
    let caught: unknown;
    try {
      loadEncoderConfig({ ENCODER_MODEL_DIR: '/nonexistent/bge', ONNX_ENCODER_POOLING: 'max', ONNX_RERANKER_MODEL: '../../etc' });
    } catch (e) {
      caught = e;
    }
    expect((caught as ConfigError).problems).toEqual([
      'ONNX_ENCODER_POOLING must be mean or cls, got "max"',
      'ENCODER_MODEL_DIR: /nonexistent/bge is not a directory',
      'ONNX_RERANKER_MODEL must be a Hugging Face model id such as BAAI/bge-small-en-v1.5, got "../../etc"',
    ]);
  });

  it('reads an OpenAI-compatible endpoint', () => {
    const c = loadEncoderConfig({
      OPENAI_ENCODER_URL: 'http://127.0.0.1:8000/v1',
      OPENAI_ENCODER_MODEL: 'bge-small',
      OPENAI_ENCODER_DIMENSIONS: '384',
      OPENAI_ENCODER_API_KEY: 'k',
      OPENAI_ENCODER_QUERY_PREFIX: 'query: ',
      DEFAULT_ENCODER: 'openai-text-encoder',
    });
    expect(c.openAi).toMatchObject({ name: 'openai-text-encoder', baseUrl: 'http://127.0.0.1:8000/v1', model: 'bge-small', dimensions: 384, apiKey: 'k', queryPrefix: 'query: ' });
    expect(c.defaultEncoder).toBe('openai-text-encoder');
  });

  it('names every missing or malformed setting at once', () => {
    let caught: unknown;
    try {
      loadEncoderConfig({ OPENAI_ENCODER_URL: 'ftp://x', BUILTIN_ENCODER_THREADS: '0' });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const problems = (caught as ConfigError).problems.join('\n');
    for (const name of ['BUILTIN_ENCODER_THREADS', 'OPENAI_ENCODER_URL', 'OPENAI_ENCODER_MODEL', 'OPENAI_ENCODER_DIMENSIONS']) expect(problems).toContain(name);
  });
});
