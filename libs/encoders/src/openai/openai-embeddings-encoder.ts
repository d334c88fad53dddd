import { DomainError, outboundRefusal } from '@lib/platform';
import type { EncodeKind, Encoder } from '../encoder.port';
import { inBatches, normalize } from '../vectors';

/** An OpenAI-compatible embeddings endpoint (OpenAI, vLLM, Ollama, LM Studio, TEI, …). */
export interface OpenAiEncoderOptions {
  /** Name the encoder is listed and chosen by. */
  readonly name: string;
  /** Base URL; requests go to `{baseUrl}/embeddings` (e.g. `https://api.openai.com/v1`). */
  readonly baseUrl: string;
  readonly model: string;
  /** Length of the vectors the endpoint returns; a different length is an error, never silently stored. */
  readonly dimensions: number;
  /** Sent as `Authorization: Bearer …` when set. */
  readonly apiKey?: string;
  /** The embeddings endpoint itself, instead of `{baseUrl}/embeddings` (encoders registered by URI). */
  readonly endpointUrl?: string;
  /** Further request headers (a registered encoder's `header` auth). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Per request. Default 30 s. */
  readonly timeoutMs?: number;
  /** Texts per request. Default 64. */
  readonly batchSize?: number;
  /** Prepended to queries / documents, for models trained with instructions (e5: `query: `, `passage: `). */
  readonly queryPrefix?: string;
  readonly documentPrefix?: string;
  /** Sends `dimensions` in the request, for models that can shorten their output (text-embedding-3-*). */
  readonly sendDimensions?: boolean;
  /** HTTP client; the service gives its guarded one (outbound policy). Default: the global fetch. */
  readonly fetch?: typeof fetch;
  /** The hybrid blend's lexical unit (Encoder.lexicalUnit). Default 100: λ 0.005 → lexical weight ≈ 0.33. */
  readonly lexicalUnit?: number;
}

interface EmbeddingsResponse {
  data?: { index?: number; embedding?: unknown }[];
}

const upstream = (code: string, message: string): DomainError => new DomainError('upstream', `encoder.${code}`, message);

/** Calls `POST {baseUrl}/embeddings`; every failure becomes a DomainError that names the encoder. */
export class OpenAiEmbeddingsEncoder implements Encoder {
  readonly name: string;
  readonly dimensions: number;
  readonly lexicalUnit: number;

  constructor(private readonly options: OpenAiEncoderOptions) {
    this.name = options.name;
    this.dimensions = options.dimensions;
    this.lexicalUnit = options.lexicalUnit ?? 100;
  }

  encode(texts: readonly string[], kind: EncodeKind): Promise<Float32Array[]> {
    const prefix = (kind === 'query' ? this.options.queryPrefix : this.options.documentPrefix) ?? '';
    return inBatches(texts.map((t) => prefix + t), this.options.batchSize ?? 64, (batch) => this.request(batch));
  }

  /**
   * The length of the vectors the endpoint returns, from one call (a registered encoder learns its dimensions so,
   * and the call proves the endpoint and its credentials work before anything is stored).
   */
  async probeDimensions(): Promise<number> {
    const data = ((await this.post(['dimension probe'])) as EmbeddingsResponse | undefined)?.data;
    const e = Array.isArray(data) ? data[0]?.embedding : undefined;
    if (!Array.isArray(e) || e.length === 0 || !e.every((x) => typeof x === 'number' && Number.isFinite(x))) {
      throw upstream('bad_response', `Encoder "${this.name}" did not answer with an embedding (expected {"data": [{"embedding": [numbers]}]})`);
    }
    return e.length;
  }

  private async request(input: readonly string[]): Promise<Float32Array[]> {
    return this.vectors(await this.post(input), input.length);
  }

  private async post(input: readonly string[]): Promise<unknown> {
    const { baseUrl, model, apiKey, timeoutMs = 30_000 } = this.options;
    const url = this.options.endpointUrl ?? `${baseUrl.replace(/\/+$/, '')}/embeddings`;
    const body = { model, input, encoding_format: 'float', ...(this.options.sendDimensions ? { dimensions: this.dimensions } : {}) };
    let res: Response;
    try {
      res = await (this.options.fetch ?? fetch)(url, {
        method: 'POST',
        headers: { ...this.options.headers, 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (e) {
      const err = e as Error;
      if (err.name === 'TimeoutError') throw new DomainError('timeout', 'encoder.timeout', `Encoder "${this.name}" did not answer within ${timeoutMs} ms`);
      const refused = outboundRefusal(err);
      if (refused) throw new DomainError('upstream', 'encoder.outbound_refused', `Encoder "${this.name}" cannot be called: ${refused.message}`);
      throw new DomainError('unavailable', 'encoder.unreachable', `Encoder "${this.name}" could not be reached: ${err.message}`);
    }
    if (!res.ok) {
      // The body is not relayed (docs/security.md): it may echo what the endpoint knows, e.g. a key or an internal address.
      await res.body?.cancel().catch(() => undefined);
      const kind = res.status === 429 ? 'rate_limited' : 'upstream';
      throw new DomainError(kind, 'encoder.http_error', `Encoder "${this.name}" answered HTTP ${res.status}`);
    }
    return res.json().catch(() => undefined);
  }

  private vectors(json: unknown, expected: number): Float32Array[] {
    const data = (json as EmbeddingsResponse | undefined)?.data;
    if (!Array.isArray(data) || data.length !== expected) {
      throw upstream('bad_response', `Encoder "${this.name}" returned ${Array.isArray(data) ? data.length : 'no'} embeddings for ${expected} inputs`);
    }
    // `index` gives each input's place; servers may answer out of order.
    const out: Float32Array[] = new Array(expected);
    data.forEach((d, i) => {
      const at = typeof d.index === 'number' ? d.index : i;
      const e = d.embedding;
      if (!Array.isArray(e) || e.length !== this.dimensions || !e.every((x) => typeof x === 'number' && Number.isFinite(x))) {
        throw upstream('bad_response', `Encoder "${this.name}" returned an embedding of ${Array.isArray(e) ? e.length : 'no'} numbers; ${this.dimensions} configured`);
      }
      if (at < 0 || at >= expected || out[at]) throw upstream('bad_response', `Encoder "${this.name}" returned a bad or repeated index ${at}`);
      out[at] = normalize(Float32Array.from(e as number[]));
    });
    return out;
  }
}
