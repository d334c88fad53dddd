import { DomainError } from '@lib/platform';
import type { EncodeKind, Encoder } from './encoder.port';
import { EncoderRegistry } from './encoder-registry';

const fake = (name: string, dimensions: number): Encoder => ({
  name,
  dimensions,
  lexicalUnit: 100,
  encode: async (texts: readonly string[], _kind: EncodeKind) => texts.map(() => new Float32Array(dimensions)),
});

describe('EncoderRegistry', () => {
  const registry = new EncoderRegistry([
    { encoder: fake('built-in-a', 512), type: 'built-in', description: 'offline' },
    { encoder: fake('remote-b', 1536), type: 'openai-compatible', description: 'endpoint' },
  ]);

  it('lists encoders in the reference shape, the first as default', () => {
    expect(registry.list()).toEqual([
      { id: 'enc_1', name: 'built-in-a', type: 'built-in', output_dimensions: 512, description: 'offline', default: true, enabled: true, image_encoding: false },
      { id: 'enc_2', name: 'remote-b', type: 'openai-compatible', output_dimensions: 1536, description: 'endpoint', default: false, enabled: true, image_encoding: false },
    ]);
  });

  it('resolves by name, and to the default without one', () => {
    expect(registry.resolve('remote-b').dimensions).toBe(1536);
    expect(registry.resolve().name).toBe('built-in-a');
  });

  it('refuses an unknown name with a typed invalid error', () => {
    let caught: unknown;
    try {
      registry.resolve('nope');
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(DomainError);
    expect(caught).toMatchObject({ kind: 'invalid', code: 'encoder.unknown' });
  });

  it('takes a configured default, and refuses a default or a name it does not know', () => {
    const entries = [{ encoder: fake('a', 2), type: 't', description: '' }, { encoder: fake('b', 2), type: 't', description: '' }];
    expect(new EncoderRegistry(entries, 'b').list().map((e) => e.default)).toEqual([false, true]);
    expect(() => new EncoderRegistry(entries, 'c')).toThrow(/DEFAULT_ENCODER/);
    expect(() => new EncoderRegistry([entries[0], entries[0]])).toThrow(/two encoders/);
  });

  it('refuses a configured encoder named "none", the name of a corpus without one', () => {
    expect(() => new EncoderRegistry([{ encoder: fake('none', 2), type: 't', description: '' }])).toThrow(/may not be named "none"/);
  });
});
