import { Injectable } from '@nestjs/common';
import { ChatCompletions } from '@lib/llms';
import { CommandContext, DomainError, FilterExpr } from '@lib/platform';
import { compileFilter, FilterAttribute } from '@lib/corpora';
import { GenerationModels } from '../model/generation-models';

/** What `intelligent_query_rewriting` runs with: the model (the request's generation model, else the default) and who asks. */
export interface RewriteRequest {
  readonly llmName?: string;
  readonly ctx: CommandContext;
}

/** The reference's `RewrittenQuery`. */
export interface RewrittenQuery {
  readonly corpus_key: string;
  readonly filter_extraction: { readonly query: string; readonly metadata_filter: string };
}

/** One corpus to rewrite for: its filter attributes and the caller's filter (as sent and compiled). */
export interface RewriteTarget {
  readonly corpusKey: string;
  readonly attributes: readonly FilterAttribute[];
  readonly metadataFilter?: string;
  readonly filter?: FilterExpr;
  readonly filterField: string;
}

/** Per corpus, in request order: the text and filter to search with. */
export interface CorporaRewrite {
  readonly texts: string[];
  readonly filters: (FilterExpr | undefined)[];
  readonly rewritten: RewrittenQuery[];
  readonly warnings: string[];
}

/** A query rewritten for one corpus, or why it could not be. */
export type Rewrite = { readonly query: string; readonly metadataFilter: string } | { readonly failed: string };

const SYSTEM = [
  'You turn a search query into a rephrased query and a metadata filter for one corpus.',
  'The filter may use only the fields listed, written as doc.<name> or part.<name>, with =, !=, <, <=, >, >=, IN (...), AND, OR, NOT and parentheses;',
  "strings are single-quoted, numbers and true/false bare. Put in the filter only constraints the query states explicitly (a year, a type, a place),",
  'and leave them out of the rephrased query. With no such constraint the filter is "".',
  'Answer with JSON only: {"query": "...", "metadata_filter": "..."}.',
].join(' ');

const fieldList = (attributes: readonly FilterAttribute[]) =>
  attributes.length ? attributes.map((a) => `${a.level === 'document' ? 'doc' : 'part'}.${a.name} (${a.type}${a.description ? `: ${a.description}` : ''})`).join('\n') : '(none: the filter must be "")';

/** The first JSON object in a model's answer (models wrap JSON in prose or code fences). */
function jsonObject(text: string): Record<string, unknown> | undefined {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  try {
    const v: unknown = JSON.parse(text.slice(start, end + 1));
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Intelligent query rewriting (the reference's tech preview): a registered model extracts, per corpus, a metadata
 * filter over the corpus's filter attributes and the query without those constraints. A model that fails or
 * answers something unusable is not the caller's fault: the corpus is searched with the query as sent and the
 * response warns `intelligent_query_rewriting_failed`.
 */
@Injectable()
export class QueryRewriter {
  constructor(
    private readonly chat: ChatCompletions,
    private readonly models: GenerationModels,
  ) {}

  /**
   * Each corpus's query text and filter after rewriting (the caller's filter AND the extracted one), the
   * reference's `rewritten_queries`, and a warning per corpus whose rewriting failed (that corpus keeps the query
   * and filter as sent). No model to use is the caller's to fix: a 400, as for generation.
   */
  async forCorpora(query: string, corpora: readonly RewriteTarget[], request: RewriteRequest): Promise<CorporaRewrite> {
    const model = await this.models.resolve(request.llmName, 'intelligent_query_rewriting');
    const outcomes = await Promise.all(corpora.map((c) => this.rewrite(model, query, c.attributes, request.ctx)));
    const out: CorporaRewrite = { texts: [], filters: [], rewritten: [], warnings: [] };
    outcomes.forEach((r, i) => {
      const c = corpora[i];
      let filter = c.filter;
      if (!('failed' in r) && r.metadataFilter) {
        const text = c.metadataFilter?.trim() ? `(${c.metadataFilter}) AND (${r.metadataFilter})` : r.metadataFilter;
        try {
          filter = compileFilter(text, c.attributes, c.filterField);
        } catch (e) {
          if (!(e instanceof DomainError)) throw e;
          r = { failed: `the extracted filter is not valid here: ${e.message}` };
        }
      }
      if ('failed' in r) {
        out.texts.push(query);
        out.filters.push(c.filter);
        out.warnings.push(`intelligent_query_rewriting_failed: corpus "${c.corpusKey}": ${r.failed}`);
        return;
      }
      out.texts.push(r.query);
      out.filters.push(filter);
      out.rewritten.push({ corpus_key: c.corpusKey, filter_extraction: { query: r.query, metadata_filter: r.metadataFilter } });
    });
    return out;
  }

  async rewrite(model: string, query: string, attributes: readonly FilterAttribute[], ctx: CommandContext): Promise<Rewrite> {
    let content: unknown;
    try {
      const completion = await this.chat.complete(
        { model, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: `Fields:\n${fieldList(attributes)}\n\nQuery: ${query}` }], temperature: 0 },
        ctx,
      );
      content = completion.choices[0]?.message?.content;
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      return { failed: `the model failed: ${e.message}` };
    }
    const answer = typeof content === 'string' ? jsonObject(content) : undefined;
    const rewritten = typeof answer?.query === 'string' ? answer.query.trim() : '';
    const filter = answer?.metadata_filter ?? '';
    if (!rewritten || typeof filter !== 'string') return { failed: 'the model did not answer {"query", "metadata_filter"}' };
    return { query: rewritten.slice(0, 5000), metadataFilter: filter.trim() };
  }
}
