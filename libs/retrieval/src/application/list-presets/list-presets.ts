import type { TextPattern } from '@lib/platform';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { GENERATION_PRESETS, GenerationPreset } from '../../domain/presets';
import { GenerationModels } from '../model/generation-models';
import { CustomerPresets } from '../presets/customer-presets';
import { customerPresetView } from '@lib/llms/read-models';

/** `GET /v2/generation_presets`: `filter` is a regular expression over name and description; `llmName` keeps presets using that model. */
export class ListGenerationPresets {
  constructor(
    readonly offset: number,
    readonly limit: number,
    readonly filter?: TextPattern,
    readonly llmName?: string,
  ) {}
}

export interface GenerationPresetPage {
  readonly generation_presets: Record<string, unknown>[];
  /** Offset of the next page, when there is one. */
  readonly nextOffset?: number;
}

/**
 * The built-in presets in the reference's `GenerationPreset` shape. `llm_name` is the model the preset
 * would use now (GENERATION_LLM, or the only registered LLM), and is absent while none resolves.
 */
@QueryHandler(ListGenerationPresets)
export class ListGenerationPresetsHandler implements IQueryHandler<ListGenerationPresets, GenerationPresetPage> {
  constructor(
    private readonly models: GenerationModels,
    private readonly customer: CustomerPresets,
  ) {}

  /** The built-in presets, then the customer's (by id), filtered alike. */
  async execute(q: ListGenerationPresets): Promise<GenerationPresetPage> {
    const llmName = await this.models.current();
    const builtIn = GENERATION_PRESETS.filter((p) => (!q.filter || q.filter.test(p.name) || q.filter.test(p.description)) && (q.llmName === undefined || q.llmName === llmName)).map((p) => presetView(p, llmName));
    const own = (await this.customer.all()).filter((r) => (!q.filter || q.filter.test(r.name) || q.filter.test(r.settings.description ?? '')) && (q.llmName === undefined || q.llmName === r.settings.llm_name)).map(customerPresetView);
    const matching = [...builtIn, ...own];
    const page = matching.slice(q.offset, q.offset + q.limit);
    return {
      generation_presets: page,
      ...(q.offset + q.limit < matching.length ? { nextOffset: q.offset + q.limit } : {}),
    };
  }
}

function presetView(p: GenerationPreset, llmName: string | undefined): Record<string, unknown> {
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    ...(llmName !== undefined ? { llm_name: llmName } : {}),
    prompt_template: p.promptTemplate,
    max_used_search_results: p.maxUsedSearchResults,
    max_tokens: p.maxTokens,
    temperature: p.temperature,
    frequency_penalty: p.frequencyPenalty,
    presence_penalty: p.presencePenalty,
    enabled: true,
    default: p.default,
    ownership: 'platform',
  };
}
