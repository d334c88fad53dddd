import { invalid } from '@lib/platform';
import type { Encoder, EncoderDescriptor } from './encoder.port';

/** One registered encoder: the working object and how `/v2/encoders` describes it. */
export interface RegisteredEncoder {
  readonly encoder: Encoder;
  readonly type: string;
  readonly description: string;
}

/**
 * Encoders registered at run time (`POST /v2/encoders`), looked up by whoever keeps them (the llms context's
 * read model): the registry asks it for names the configuration does not have.
 */
export interface EncoderSource {
  find(name: string): Promise<Encoder | undefined>;
  /** As `/v2/encoders` lists them, after the configured ones. */
  list(): Promise<EncoderDescriptor[]>;
}

/**
 * The `encoder_name` that creates a lexical-only corpus: no vectors are computed or stored for its documents and its
 * queries rank by BM25 alone, without a notice (the reference API has no such corpus; docs/search.md). Reserved:
 * no configured or registered encoder may take it.
 */
export const NO_ENCODER = 'none';

/**
 * The encoders this process can use, in configuration order. Ids (`enc_<n>`) follow that order, so they are
 * stable while the configuration is; corpora record the encoder's name, which is what `resolve` takes.
 */
export class EncoderRegistry {
  private readonly byName = new Map<string, RegisteredEncoder>();
  private source: EncoderSource | undefined;
  readonly defaultName: string;

  constructor(entries: readonly RegisteredEncoder[], defaultName?: string) {
    for (const e of entries) {
      if (this.byName.has(e.encoder.name)) throw new Error(`two encoders are named "${e.encoder.name}"`);
      if (e.encoder.name === NO_ENCODER) throw new Error(`an encoder may not be named "${NO_ENCODER}": that name creates a corpus without an encoder`);
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

  /** Where registered encoders are found; set once by the context that keeps them. */
  attach(source: EncoderSource): void {
    this.source = source;
  }

  /** Whether a configured encoder has that name (a registered one may not take it). */
  configures(name: string): boolean {
    return this.byName.has(name);
  }

  /** The configured encoders, then the registered ones. */
  async listAll(): Promise<EncoderDescriptor[]> {
    return [...this.list(), ...((await this.source?.list()) ?? [])];
  }

  /** A configured or registered encoder of that name; undefined when neither has it. */
  async lookup(name: string): Promise<Encoder | undefined> {
    return this.byName.get(name)?.encoder ?? (await this.source?.find(name));
  }

  /** As `resolve`, registered encoders included. */
  async resolveAny(name?: string): Promise<Encoder> {
    const found = name === undefined ? this.byName.get(this.defaultName)?.encoder : await this.lookup(name);
    if (!found) {
      throw invalid('encoder.unknown', `Unknown encoder "${name}"; GET /v2/encoders lists the available ones`, { encoder_name: `unknown encoder "${name}"` });
    }
    return found;
  }

  /** The configured encoder of that name, if this process has it (a corpus may name one the configuration has since dropped). */
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
