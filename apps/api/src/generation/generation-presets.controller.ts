import { Controller, Get, Query } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { GenerationPresetPage, ListGenerationPresets } from '@lib/retrieval';
import { invalid } from '@lib/platform';
import { offsetOfPageKey, offsetPageKey, pageLimit } from '../corpora/paging';
import { Policy } from '../http/policy';

/** The built-in generation presets (`GET /v2/generation_presets`), in the reference API's shape (docs/generation.md). */
@Controller('v2/generation_presets')
export class GenerationPresetsController {
  constructor(private readonly queries: QueryBus) {}

  /** The reference allows corpus_viewer … owner, the same callers as the LLM list: `llm.use` says exactly that. */
  @Get()
  @Policy('llm.use')
  async list(@Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('filter') filter?: string, @Query('llm_name') llmName?: string) {
    let regex: RegExp | undefined;
    try {
      regex = filter ? new RegExp(filter) : undefined;
    } catch {
      throw invalid('request.invalid', 'filter must be a valid regular expression', { filter: 'invalid regular expression' });
    }
    const page: GenerationPresetPage = await this.queries.execute(new ListGenerationPresets(offsetOfPageKey(pageKey), pageLimit(limit, 10, 100), regex, llmName || undefined));
    return { generation_presets: page.generation_presets, metadata: page.nextOffset !== undefined ? { page_key: offsetPageKey(page.nextOffset) } : {} };
  }
}
