import { ConfigError } from '@lib/platform';
import { loadEncoderConfig } from './encoder-config';

describe('loadEncoderConfig', () => {
  it('needs nothing: the built-in encoder alone, with its defaults', () => {
    expect(loadEncoderConfig({})).toEqual({ builtIn: { threads: undefined, batchSize: undefined, maxChars: undefined }, openAi: undefined, defaultEncoder: undefined });
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
