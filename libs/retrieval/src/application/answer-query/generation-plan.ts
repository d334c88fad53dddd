import type { QueryResponse } from '../query/query-corpora';
import { ChatRequest, FactualConsistency } from '@lib/llms';
import { CommandContext, DomainError, invalid } from '@lib/platform';
import { CitationOptions, withoutCitations } from '../../domain/citations';
import type { ChatExchange } from '../../domain/chat';
import { DEFAULT_MAX_USED_SEARCH_RESULTS, GenerationParams } from '../../domain/generation-params';
import { responseLanguage, ResponseLanguage } from '../../domain/languages';
import { DEFAULT_PRESET, findPreset, GENERATION_PRESETS, GenerationPreset } from '../../domain/presets';
import type { GenerationModels } from '../model/generation-models';
import { PromptTemplate, RenderedPrompt } from '../prompt/prompt-template';

export type UsedResult = QueryResponse['search_results'][number];

/** Everything a generation needs that can be checked before retrieval runs, so that bad input fails first. */
export interface GenerationPlan {
  readonly llmName: string;
  readonly template: PromptTemplate;
  readonly maxUsedSearchResults: number;
  readonly maxResponseCharacters?: number;
  readonly responseLanguage?: string;
  readonly sampling: Readonly<Record<string, number>>;
  readonly citations: CitationOptions;
  readonly factualConsistency: boolean;
}

/** Customer presets (`/v2/generation_presets`), looked up by name and as a model's default. */
export interface PresetLookup {
  named(name: string): Promise<(GenerationPreset & { llmName?: string }) | undefined>;
  defaultFor(llmName: string): Promise<GenerationPreset | undefined>;
}

/**
 * The preset (named, a customer's default for the model, or the built-in default) with the request's overrides,
 * the model resolved (the request's, else a customer preset's own, else the service's) and the template compiled.
 */
export async function planGeneration(params: GenerationParams, models: GenerationModels, presets?: PresetLookup): Promise<GenerationPlan> {
  const named = params.presetName === undefined ? undefined : (findPreset(params.presetName) ?? (await presets?.named(params.presetName)));
  if (params.presetName !== undefined && !named) {
    const names = GENERATION_PRESETS.map((p) => p.name).join(', ');
    throw invalid('generation.unknown_preset', `Unknown generation preset "${params.presetName}"; GET /v2/generation_presets lists them (built in: ${names})`, {
      [params.presetField]: `no preset of this name; GET /v2/generation_presets lists them`,
    });
  }
  const mp = params.modelParameters;
  const llmName = await models.resolve(mp.llmName ?? (named as { llmName?: string } | undefined)?.llmName);
  const preset: GenerationPreset = named ?? (await presets?.defaultFor(llmName)) ?? DEFAULT_PRESET;
  const template = PromptTemplate.compile(params.promptTemplate ?? preset.promptTemplate, params.promptTemplate !== undefined ? params.templateField : params.presetField);
  const sampling = {
    max_tokens: mp.maxTokens ?? preset.maxTokens,
    temperature: mp.temperature ?? preset.temperature,
    frequency_penalty: mp.frequencyPenalty ?? preset.frequencyPenalty,
    presence_penalty: mp.presencePenalty ?? preset.presencePenalty,
  };
  return {
    llmName,
    template,
    maxUsedSearchResults: params.maxUsedSearchResults ?? preset.maxUsedSearchResults ?? DEFAULT_MAX_USED_SEARCH_RESULTS,
    maxResponseCharacters: params.maxResponseCharacters,
    responseLanguage: params.responseLanguage,
    sampling,
    citations: params.citations,
    factualConsistency: params.enableFactualConsistencyScore,
  };
}

/** One generation's inputs after retrieval: the used results, the language, and the rendered prompt (none without results). */
export interface PreparedGeneration {
  readonly used: readonly UsedResult[];
  readonly language: ResponseLanguage;
  readonly prompt?: RenderedPrompt;
}

export function prepareGeneration(plan: GenerationPlan, query: string, results: readonly UsedResult[], chatHistory?: readonly ChatExchange[]): PreparedGeneration {
  const used = results.slice(0, plan.maxUsedSearchResults);
  const language = responseLanguage(plan.responseLanguage, query);
  if (used.length === 0) return { used, language };
  const prompt = plan.template.render({ query, results: used, language, maxResponseCharacters: plan.maxResponseCharacters, chatHistory });
  return { used, language, prompt };
}

export const chatRequest = (plan: GenerationPlan, prompt: RenderedPrompt): ChatRequest => ({ model: plan.llmName, messages: prompt.messages, ...plan.sampling });

/**
 * Scores an answer (markers removed) against the used results' texts. A missing or failing scorer does not
 * fail the query: the score is left out and a warning says why.
 */
export async function scoreAnswer(fcs: FactualConsistency, answer: string, used: readonly UsedResult[], ctx: CommandContext): Promise<{ score?: number; warning?: string }> {
  const generatedText = withoutCitations(answer, used).trim();
  if (!generatedText) return { warning: 'fcs_skipped: the answer is empty' };
  try {
    const { score } = await fcs.evaluate({ generatedText, sourceTexts: used.map((r) => r.text) }, ctx);
    return { score };
  } catch (e) {
    if (!(e instanceof DomainError)) throw e;
    return { warning: `${e.code === 'fcs.not_configured' ? 'fcs_not_configured' : 'fcs_failed'}: ${e.message}` };
  }
}
