import type { CitationOptions } from './citations';

/** Sampling settings sent to the model; each overrides the preset's. */
export interface ModelParameters {
  /** A registered LLM's name; overrides the model the preset resolves to. */
  readonly llmName?: string;
  readonly maxTokens?: number;
  readonly temperature?: number;
  readonly frequencyPenalty?: number;
  readonly presencePenalty?: number;
}

/**
 * The reference's `GenerationParameters` of one query, read at the edge. Absent fields fall back to the
 * preset's values, then to the reference's defaults.
 */
export interface GenerationParams {
  readonly presetName?: string;
  /** Where the preset name came from (`generation.generation_preset_name` or the deprecated `prompt_name`). */
  readonly presetField: string;
  readonly promptTemplate?: string;
  /** Where the template came from (`generation.prompt_template` or the deprecated `prompt_text`). */
  readonly templateField: string;
  readonly maxUsedSearchResults?: number;
  readonly maxResponseCharacters?: number;
  /** `auto`, an ISO 639-3 code or its ISO 639-1 form; default `auto`. */
  readonly responseLanguage?: string;
  readonly modelParameters: ModelParameters;
  readonly citations: CitationOptions;
  /** Default true, as in the reference. */
  readonly enableFactualConsistencyScore: boolean;
}

/** The reference's default number of search results given to the prompt. */
export const DEFAULT_MAX_USED_SEARCH_RESULTS = 5;
/** Upper bound of `max_used_search_results` (prompts beyond this exceed most models' context). */
export const MAX_USED_SEARCH_RESULTS = 100;
