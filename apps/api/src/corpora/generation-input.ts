import type { GenerationParams } from '@lib/retrieval';
import type { GenerationDto } from './query.dto';

/**
 * The request's `generation` as the generation library takes it; undefined when there is none (absent, null,
 * or `enabled: false`: no summary, as the reference says). The deprecated `prompt_name` and `prompt_text`
 * stand in for `generation_preset_name` and `prompt_template` when those are absent, and errors then name them.
 */
export function generationParams(dto: GenerationDto | null | undefined): GenerationParams | undefined {
  if (!dto || dto.enabled === false) return undefined;
  const presetAlias = dto.generation_preset_name === undefined && dto.prompt_name !== undefined;
  const templateAlias = dto.prompt_template === undefined && dto.prompt_text !== undefined;
  const mp = dto.model_parameters ?? {};
  return {
    presetName: dto.generation_preset_name ?? dto.prompt_name,
    presetField: presetAlias ? 'generation.prompt_name' : 'generation.generation_preset_name',
    promptTemplate: dto.prompt_template ?? dto.prompt_text,
    templateField: templateAlias ? 'generation.prompt_text' : 'generation.prompt_template',
    maxUsedSearchResults: dto.max_used_search_results,
    maxResponseCharacters: dto.max_response_characters,
    responseLanguage: dto.response_language,
    modelParameters: { llmName: mp.llm_name, maxTokens: mp.max_tokens, temperature: mp.temperature, frequencyPenalty: mp.frequency_penalty, presencePenalty: mp.presence_penalty },
    citations: { style: dto.citations?.style ?? 'numeric', urlPattern: dto.citations?.url_pattern, textPattern: dto.citations?.text_pattern },
    enableFactualConsistencyScore: dto.enable_factual_consistency_score ?? true,
  };
}
