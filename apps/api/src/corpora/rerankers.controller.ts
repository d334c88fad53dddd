import { Controller, Get, Query } from '@nestjs/common';
import { ModelRerankers } from '@lib/retrieval';
import { listFilter } from '@lib/platform';
import { offsetOfPageKey, offsetPageKey, pageLimit } from '../http/paging';
import { Policy } from '../http/policy';

/**
 * `GET /v2/rerankers` (the deployment's model reranker, docs/search.md; the algorithmic ones — mmr, userfn, chain
 * — are request types, not listed) and `GET /v2/table_extractors` (docs/extraction.md). The reference allows
 * corpus_viewer … owner: the callers of `llm.use`.
 */
@Controller('v2')
export class RerankersController {
  constructor(private readonly rerankers: ModelRerankers) {}

  @Get('rerankers')
  @Policy('llm.use')
  list(@Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('filter') filter?: string) {
    const regex = listFilter(filter);
    const all = this.rerankers.list().filter((r) => !regex || regex.test(r.name) || regex.test(r.description));
    const offset = offsetOfPageKey(pageKey);
    const n = pageLimit(limit, 10, 100);
    return { rerankers: all.slice(offset, offset + n), metadata: offset + n < all.length ? { page_key: offsetPageKey(offset + n) } : {} };
  }

  /** Tables come from each format's own structure (HTML and office tables, PDF layout): one extractor, the default. */
  @Get('table_extractors')
  @Policy('llm.use')
  tableExtractors() {
    return { table_extractors: [{ name: 'structure', is_default: true, description: "Tables as the file's own structure holds them: HTML and office-document tables, and PDF text laid out in rows and columns (docs/extraction.md)" }] };
  }
}
