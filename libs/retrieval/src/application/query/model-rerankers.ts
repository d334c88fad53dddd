import { Inject, Injectable } from '@nestjs/common';
import { DomainError, invalid, OUTBOUND_HTTP, OutboundHttp, outboundRefusal, SERVICE_CONFIG, ServiceConfig } from '@lib/platform';
import type { ModelReranker } from './rerankers';

/** The id of the deployment's one model reranker (the reference's ids are `rnk_<n>`). */
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

/** The model rerankers this deployment has: one, from `RERANKER_URL` / `RERANKER_NAME` (docs/query.md). */
@Injectable()
export class ModelRerankers {
  private readonly configured?: { readonly name: string; readonly reranker: ModelReranker };

  constructor(@Inject(SERVICE_CONFIG) config: ServiceConfig, @Inject(OUTBOUND_HTTP) outbound: OutboundHttp) {
    if (config.rerankerUrl) {
      const options = { url: config.rerankerUrl, model: config.rerankerModel, apiKey: config.rerankerApiKey, fetch: outbound.fetch };
      this.configured = { name: config.rerankerName, reranker: new HttpModelReranker(options) };
    }
  }

  names(): string[] {
    return this.configured ? [this.configured.name] : [];
  }

  /** The reference's `Reranker` list (`GET /v2/rerankers`): the configured endpoint, as `rnk_1`. */
  list(): { id: string; name: string; description: string; enabled: boolean }[] {
    return this.configured ? [{ id: MODEL_RERANKER_ID, name: this.configured.name, description: 'The rerank endpoint this deployment calls (RERANKER_URL); use it as {"type": "customer_reranker", "reranker_name": …} or by reranker_id', enabled: true }] : [];
  }

  /** The name of a reranker given by id (`reranker_id`), if there is one. */
  nameOf(id: string): string | undefined {
    return this.configured && id === MODEL_RERANKER_ID ? this.configured.name : undefined;
  }

  /** By name, or by id written `id:<reranker_id>` (a request's `reranker_id`). */
  get(name: string, field: string): ModelReranker {
    if (name.startsWith('id:')) {
      const byId = this.nameOf(name.slice(3));
      if (!byId) throw invalid('reranker.unknown', `No reranker with id "${name.slice(3)}": GET /v2/rerankers lists them`, { [field.replace(/reranker_name$/, 'reranker_id')]: 'unknown reranker id' });
      return this.configured!.reranker;
    }
    if (this.configured?.name === name) return this.configured.reranker;
    const hint = this.configured ? `the configured one is "${this.configured.name}"` : 'none is configured: set RERANKER_URL (and RERANKER_NAME) to a rerank endpoint';
    throw invalid('reranker.unknown', `No reranker named "${name}": ${hint}`, { [field]: 'unknown reranker' });
  }
}
