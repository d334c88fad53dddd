import { Inject, Injectable, Optional } from '@nestjs/common';
import { ENCODER_REGISTRY, EncoderRegistry } from '@lib/encoders';
import type { SearchIndex, SearchRequest } from '@lib/platform';
import { lexicalWeight } from '@lib/retrieval';
import type { Tool, ToolConfig, ToolContext, ToolDefinition, ToolResult } from '@lib/tools';
import { SESSION_RECALL_DEFAULT_LEXICAL_INTERPOLATION } from '@lib/tools/domain';
import { recallIndexOf, type RecallPartMetadata } from '../../read-models';
import { RECALL_INDEX } from '../recall/recall-index.port';
import { recallFilter, RecallRefused, RecallScopes } from '../recall/recall-scope';

const DEFAULT_LIMIT = 5;
const DEFAULT_TEXT_CHARS = 1_000;
const MAX_QUERY_CHARS = 2_000;

const err = (message: string): ToolResult => ({ output: { error: message }, error: true });

/** An RFC 3339 date-time with its offset (what `after`/`before` take), in epoch milliseconds. */
function instant(name: string, v: unknown): number | string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(v) || Number.isNaN(Date.parse(v))) return `${name} must be an RFC 3339 date-time such as 2026-12-01T00:00:00Z`;
  return Date.parse(v);
}

/**
 * `session_recall`: searches the past sessions the current one may see (docs/agents.md, "Recall") for `query`, in the
 * recall index the session_recall projection keeps, and answers the best messages with the session and event they
 * come from. Scope, hidden messages, time range and metadata are all in the index query (never a cut after the top k).
 * Ranked hybrid: the query encoded with the default encoder (the one the recall embedder encodes messages with),
 * fused with BM25 by rank in the index, the lexical side weighted as the corpora query maps `lexical_interpolation`
 * (docs/search.md); a message not embedded yet is found by its words only. λ = 1, or no encoder: lexical only.
 */
@Injectable()
export class SessionRecallTool implements Tool {
  constructor(
    @Inject(RECALL_INDEX) private readonly index: SearchIndex,
    private readonly scopes: RecallScopes,
    @Optional() @Inject(ENCODER_REGISTRY) private readonly encoders?: EncoderRegistry,
  ) {}

  definition(name: string, config: ToolConfig): ToolDefinition {
    return {
      type: 'function',
      function: {
        name,
        description: config.description ?? "Searches this user's earlier conversations with you (not this one) and returns the best matching messages with where they come from.",
        parameters: {
          type: 'object',
          properties: {
            query: { type: 'string', description: 'What to look for, in words the earlier messages would use.' },
            after: { type: 'string', format: 'date-time', description: 'Only messages at or after this time (RFC 3339).' },
            before: { type: 'string', format: 'date-time', description: 'Only messages before this time (RFC 3339).' },
            metadata_filter: { type: 'string', description: "Only sessions whose metadata this filter selects, e.g. doc.topic = 'billing'." },
          },
          required: ['query'],
        },
      },
    };
  }

  async run(config: ToolConfig, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    if (typeof args.query !== 'string' || !args.query.trim()) return err('query must be a non-empty string');
    if (args.query.length > MAX_QUERY_CHARS) return err(`query must be at most ${MAX_QUERY_CHARS} characters`);
    const after = instant('after', args.after);
    const before = instant('before', args.before);
    if (typeof after === 'string') return err(after);
    if (typeof before === 'string') return err(before);
    if (args.metadata_filter !== undefined && typeof args.metadata_filter !== 'string') return err('metadata_filter must be a string');
    let scope;
    try {
      scope = await this.scopes.of(ctx.agentKey, ctx.sessionKey, ctx.command?.actor, args.metadata_filter || undefined);
    } catch (e) {
      if (e instanceof RecallRefused) return err(e.message);
      throw e;
    }
    if (scope.sessionKeys?.length === 0) return { output: { results: [] }, error: false };
    const limit = typeof config.limit === 'number' ? config.limit : DEFAULT_LIMIT;
    const chars = typeof config.max_text_chars === 'number' ? config.max_text_chars : DEFAULT_TEXT_CHARS;
    const filter = recallFilter(scope, { afterMs: after, beforeMs: before });
    const lambda = typeof config.lexical_interpolation === 'number' ? config.lexical_interpolation : SESSION_RECALL_DEFAULT_LEXICAL_INTERPOLATION;
    const index = recallIndexOf(scope.agentId);
    const ranking = await this.ranking(args.query, lambda);
    let hits;
    let note: string | undefined;
    try {
      hits = await this.index.search(index, { ...ranking, filter, limit });
    } catch (e) {
      // Vectors of an earlier default encoder of another size cannot be compared with this one's query: by words, said.
      if (ranking.mode === 'lexical') throw e;
      hits = await this.index.search(index, { mode: 'lexical', text: args.query, filter, limit });
      note = `ranked by words only: the search by meaning failed (${(e as Error).message})`;
    }
    const results = hits.map((h) => {
      const part = h.partMetadata as unknown as RecallPartMetadata;
      return {
        session_key: String(h.documentMetadata.session_key),
        event_id: part.event_id,
        created_at: part.created_at,
        role: part.role,
        text: h.text.length > chars ? `${h.text.slice(0, chars)}…` : h.text,
        score: Math.round(h.score * 1000) / 1000,
      };
    });
    return { output: { results, ...(note && { note }) }, error: false };
  }

  /** Hybrid with the query's vector, the vector side's rank weight 1 − w(λ); λ = 1 or no encoder: lexical. */
  private async ranking(query: string, lambda: number): Promise<Pick<SearchRequest, 'mode' | 'text' | 'vector' | 'alpha'>> {
    const encoder = lambda < 1 ? this.encoders?.resolve() : undefined;
    if (!encoder) return { mode: 'lexical', text: query };
    const [vector] = await encoder.encode([query], 'query');
    const alpha = 1 - lexicalWeight(lambda, encoder.lexicalUnit);
    return { mode: lambda === 0 ? 'vector' : 'hybrid', text: query, vector: Array.from(vector), alpha };
  }
}
