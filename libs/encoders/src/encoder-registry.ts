import { invalid } from '@lib/platform';
import type { Encoder, EncoderDescriptor } from './encoder.port';

/** One registered encoder: the working object and how `/v2/encoders` describes it. */
export interface RegisteredEncoder {
  readonly encoder: Encoder;
  readonly type: string;
  readonly description: string;
}

/**
 * The encoders this process can use, in configuration order. Ids (`enc_<n>`) follow that order, so they are
 * stable while the configuration is; corpora record the encoder's name, which is what `resolve` takes.
 */
export class EncoderRegistry {
  private readonly byName = new Map<string, RegisteredEncoder>();
  readonly defaultName: string;

  constructor(entries: readonly RegisteredEncoder[], defaultName?: string) {
    for (const e of entries) {
      if (this.byName.has(e.encoder.name)) throw new Error(`two encoders are named "${e.encoder.name}"`);
      this.byName.set(e.encoder.name, e);
    }
    const fallback = entries[0]?.encoder.name;
    if (fallback === undefined) throw new Error('an encoder registry needs at least one encoder');
    if (defaultName !== undefined && !this.byName.has(defaultName)) {
      throw new Error(`DEFAULT_ENCODER names "${defaultName}", which is not configured (known: ${[...this.byName.keys()].join(', ')})`);
    }
    this.defaultName = defaultName ?? fallback;
  }

  /** Every encoder as the reference API shows it, in id order. */
  list(): EncoderDescriptor[] {
    return [...this.byName.values()].map((e, i) => ({
      id: `enc_${i + 1}`,
      name: e.encoder.name,
      type: e.type,
      output_dimensions: e.encoder.dimensions,
      description: e.description,
      default: e.encoder.name === this.defaultName,
      enabled: true,
      image_encoding: false,
    }));
  }

  /** The encoder of that name, if this process has it (a corpus may name one the configuration has since dropped). */
  find(name: string): Encoder | undefined {
    return this.byName.get(name)?.encoder;
  }

  /** The encoder of that name, or the default one when no name is given. Unknown name → 400 `encoder.unknown`. */
  resolve(name?: string): Encoder {
    const found = this.byName.get(name ?? this.defaultName);
    if (!found) {
      throw invalid('encoder.unknown', `Unknown encoder "${name}"; GET /v2/encoders lists the available ones`, { encoder_name: `unknown encoder "${name}"` });
    }
    return found.encoder;
  }
}
