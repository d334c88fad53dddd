import { Inject, Injectable } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { QueryCorpora, QueryResponse } from '@lib/retrieval';
import { DomainError, READ_STORE, ReadStore } from '@lib/platform';
import { storeImage, storeTable } from './document-attachments';
import type { ToolConfig } from '../../domain/tool-config';
import type { Tool, ToolContext, ToolDefinition, ToolResult } from './tool.port';

/** The RAG tool: the configuration fixes the search; the model supplies the query. */
@Injectable()
export class CorporaSearchTool implements Tool {
  constructor(
    private readonly queries: QueryBus,
    @Inject(READ_STORE) private readonly reads: ReadStore,
  ) {}

  definition(name: string, config: ToolConfig): ToolDefinition {
    const corpora = corporaOf(config).map((c) => c.corpus_key).join(', ');
    return {
      type: 'function',
      function: {
        name,
        description: config.description ?? `Searches the corpora ${corpora} and returns the most relevant passages for a query.`,
        parameters: { type: 'object', properties: { query: { type: 'string', description: 'What to search for, in natural language' } }, required: ['query'] },
      },
    };
  }

  async run(config: ToolConfig, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const query = args.query;
    if (typeof query !== 'string' || !query.trim()) return { output: { error: 'query must be a non-empty string' }, error: true };
    if (query.length > 5000) return { output: { error: 'query is longer than 5000 characters' }, error: true };
    const search = (config.query_configuration?.search ?? {}) as { corpora?: CorpusSpec[]; limit?: number; offset?: number };
    const corpora = corporaOf(config);
    for (const c of corpora) {
      // A corpus the identity cannot read is reported as absent, as the API does to such a caller.
      if (!(await ctx.canReadCorpus(c.corpus_key))) return { output: { error: `corpus "${c.corpus_key}" does not exist or the agent's identity may not read it` }, error: true };
    }
    try {
      const dated = config.type === CORPORA_SEARCH_DATED;
      const response: QueryResponse = await this.queries.execute(
        new QueryCorpora(
          query,
          corpora.map((c, i) => ({ corpusKey: c.corpus_key, lexicalInterpolation: c.lexical_interpolation ?? 0.025, metadataFilter: c.metadata_filter, filterField: `query_configuration.search.corpora[${i}].metadata_filter` })),
          { limit: clamp(search.limit ?? 10, 1, 100), offset: clamp(search.offset ?? 0, 0, 1000) },
          ctx.now,
        ),
      );
      if (dated) return { output: { search_results: await this.withAttachments(response.search_results, ctx) }, error: false };
      return {
        output: {
          search_results: response.search_results.map((r) => ({ text: r.text, score: r.score, document_id: r.document_id, corpus_key: (r as { corpus_key?: string }).corpus_key, part_metadata: r.part_metadata, document_metadata: r.document_metadata })),
        },
        error: false,
      };
    } catch (e) {
      if (e instanceof DomainError) return { output: { error: e.message }, error: true };
      throw e;
    }
  }

  /**
   * The dated variant's results: a part cut from a table or an image says so (`result_type`, `table` or `image`)
   * and keeps the matched snippet as its text; the table itself is not inlined but resolved on demand as a
   * session artifact (JSON), an image likewise (for `image_read`), each once per document.
   */
  private async withAttachments(results: QueryResponse['search_results'], ctx: ToolContext): Promise<Record<string, unknown>[]> {
    const made = new Map<string, Promise<Record<string, unknown> | undefined>>();
    return Promise.all(
      results.map(async (r) => {
        const base = { text: r.text, score: r.score, document_id: r.document_id, corpus_key: r.corpus_key, part_metadata: r.part_metadata, document_metadata: r.document_metadata };
        // The query resolved which table or image each part was cut from (resultAttachments).
        if ((!r.table && !r.image) || !ctx.storeArtifact) return { ...base, result_type: 'text' };
        const key = `${r.corpus_key}\u0000${r.document_id}\u0000${r.table ? `table\u0000${r.table.id}` : `image\u0000${String(r.image!.id)}`}`;
        if (r.table) {
          const table = r.table;
          if (!made.has(key)) made.set(key, storeTable(ctx.storeArtifact, r.corpus_key, r.document_id, table));
          return { ...base, result_type: 'text', table: { ...(await made.get(key)!), ...(table.description ? { description: table.description } : {}) } };
        }
        const view = r.image!;
        const meta = { id: String(view.id), mimeType: String(view.mime_type), ...(typeof view.title === 'string' ? { title: view.title } : {}), ...(typeof view.caption === 'string' ? { caption: view.caption } : {}) };
        if (!made.has(key)) made.set(key, storeImage(ctx.storeArtifact, this.reads, r.corpus_key, r.document_id, meta));
        const image = await made.get(key)!;
        return image ? { ...base, result_type: 'image', image: { ...image, ...(typeof view.description === 'string' ? { description: view.description } : {}) } } : { ...base, result_type: 'text' };
      }),
    );
  }
}

/** The dated retrieval tool (`<family>_<YYYYMMDD>`, the spec's Versioning 2); plain `corpora_search` is unchanged. */
export const CORPORA_SEARCH_DATED = 'corpora_search_20260608';

interface CorpusSpec {
  readonly corpus_key: string;
  readonly metadata_filter?: string;
  readonly lexical_interpolation?: number;
}

const corporaOf = (config: ToolConfig): CorpusSpec[] => ((config.query_configuration?.search as { corpora?: CorpusSpec[] } | undefined)?.corpora ?? []);
const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Math.trunc(Number(n) || 0)));
