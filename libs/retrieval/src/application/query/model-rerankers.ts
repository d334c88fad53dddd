import { Inject, Injectable, Optional } from '@nestjs/common';
import { ONNX_RERANKER, OnnxCrossEncoder } from '@lib/encoders';
import { DomainError, invalid, OUTBOUND_HTTP, OutboundHttp, outboundRefusal, SERVICE_CONFIG, ServiceConfig } from '@lib/platform';
import type { ModelReranker } from './rerankers';

/** The id of the deployment's first model reranker (the reference's ids are `rnk_<n>`). */
export const MODEL_RERANKER_ID = 'rnk_1';

/** How long a rerank call may take before the query fails with 504. */
const RERANK_TIMEOUT_MS = 30_000;

/**
 * A rerank endpoint in the shape Cohere, Jina, vLLM and Infinity share (`POST {query, documents, top_n,
 * model}` → `{results: [{index, relevance_score}]}`), or Hugging Face TEI's (`{query, texts}` →
 * `[{index, score}]`); either answer is read. Scores are used as the endpoint returns them (0–1 for these).
 */
export class HttpModelReranker implements ModelReranker {
  constructor(private readonly options: { readonly url: string; readonly model?: string; readonly apiKey?: string; readonly fetch: typeof fetch }) {}

  async score(query: string, texts: readonly string[]): Promise<number[]> {
    let res: Response;
    try {
      res = await this.options.fetch(this.options.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}) },
        body: JSON.stringify({ query, documents: texts, texts, top_n: texts.length, ...(this.options.model ? { model: this.options.model } : {}) }),
        signal: AbortSignal.timeout(RERANK_TIMEOUT_MS),
      });
    } catch (e) {
      if (e instanceof DOMException && e.name === 'TimeoutError') throw new DomainError('timeout', 'reranker.timeout', `The reranker did not answer within ${RERANK_TIMEOUT_MS} ms`);
      const refused = outboundRefusal(e);
      if (refused) throw new DomainError('upstream', 'reranker.outbound_refused', `The reranker cannot be called: ${refused.message}`);
      throw new DomainError('upstream', 'reranker.unreachable', `The reranker could not be reached: ${e instanceof Error ? e.message : String(e)}`);
    }
    const body: unknown = await res.json().catch(() => undefined);
    if (!res.ok) throw new DomainError('upstream', 'reranker.failed', `The reranker answered ${res.status}`);
    const rows = Array.isArray(body) ? body : (body as { results?: unknown } | undefined)?.results;
    if (!Array.isArray(rows)) throw new DomainError('upstream', 'reranker.bad_response', 'The reranker answered without results');
    const scores = texts.map(() => 0);
    for (const row of rows as { index?: unknown; relevance_score?: unknown; score?: unknown }[]) {
      const value = Number(row.relevance_score ?? row.score);
      if (Number.isInteger(row.index) && (row.index as number) < texts.length && Number.isFinite(value)) scores[row.index as number] = value;
    }
    return scores;
  }
}

/** A model reranker of the deployment, as `GET /v2/rerankers` lists it. */
interface ConfiguredReranker {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly reranker: ModelReranker;
}

/**
 * The model rerankers this deployment has (docs/query.md): the rerank endpoint of `RERANKER_URL` /
 * `RERANKER_NAME`, then the in-process ONNX cross-encoder of `RERANKER_MODEL_DIR` (docs/encoders.md), each
 * `rnk_<n>` in that order.
 */
@Injectable()
export class ModelRerankers {
  private readonly configured: ConfiguredReranker[] = [];

  constructor(@Inject(SERVICE_CONFIG) config: ServiceConfig, @Inject(OUTBOUND_HTTP) outbound: OutboundHttp, @Optional() @Inject(ONNX_RERANKER) onnx?: OnnxCrossEncoder | null) {
    if (config.rerankerUrl) {
      const options = { url: config.rerankerUrl, model: config.rerankerModel, apiKey: config.rerankerApiKey, fetch: outbound.fetch };
      this.add(config.rerankerName, 'The rerank endpoint this deployment calls (RERANKER_URL)', new HttpModelReranker(options));
    }
    if (onnx) this.add(onnx.name, `Cross-encoder ${onnx.files.modelId}, run inside the service (RERANKER_MODEL_DIR)`, onnx);
  }

  private add(name: string, what: string, reranker: ModelReranker): void {
    if (this.configured.some((c) => c.name === name)) throw new Error(`two rerankers are named "${name}": set ONNX_RERANKER_NAME to another name`);
    const id = this.configured.length === 0 ? MODEL_RERANKER_ID : `rnk_${this.configured.length + 1}`;
    this.configured.push({ id, name, reranker, description: `${what}; use it as {"type": "customer_reranker", "reranker_name": …} or by reranker_id` });
  }

  names(): string[] {
    return this.configured.map((c) => c.name);
  }

  /** The reference's `Reranker` list (`GET /v2/rerankers`). */
  list(): { id: string; name: string; description: string; enabled: boolean }[] {
    return this.configured.map((c) => ({ id: c.id, name: c.name, description: c.description, enabled: true }));
  }

  /** The name of a reranker given by id (`reranker_id`), if there is one. */
  nameOf(id: string): string | undefined {
    return this.configured.find((c) => c.id === id)?.name;
  }

  /** By name, or by id written `id:<reranker_id>` (a request's `reranker_id`). */
  get(name: string, field: string): ModelReranker {
    if (name.startsWith('id:')) {
      const byId = this.configured.find((c) => c.id === name.slice(3));
      if (!byId) throw invalid('reranker.unknown', `No reranker with id "${name.slice(3)}": GET /v2/rerankers lists them`, { [field.replace(/reranker_name$/, 'reranker_id')]: 'unknown reranker id' });
      return byId.reranker;
    }
    const found = this.configured.find((c) => c.name === name);
    if (found) return found.reranker;
    const names = this.configured.map((c) => `"${c.name}"`).join(', ');
    const hint = this.configured.length === 1 ? `the configured one is ${names}` : this.configured.length ? `the configured ones are ${names}` : 'none is configured: set RERANKER_URL (a rerank endpoint) or RERANKER_MODEL_DIR (an ONNX cross-encoder)';
    throw invalid('reranker.unknown', `No reranker named "${name}": ${hint}`, { [field]: 'unknown reranker' });
  }
}
