import { Inject, Injectable } from '@nestjs/common';
import { findLlm, LLMS, LlmRow } from '@lib/llms';
import { DomainError, invalid, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig } from '@lib/platform';

/** Where a request names its model, for the 400's field. */
export const LLM_FIELD = 'generation.model_parameters.llm_name';

const HOW =
  'name a registered LLM in generation.model_parameters.llm_name, set GENERATION_LLM to the name of a registered LLM, or register one with POST /v2/llms (the only registered LLM is used when nothing names one)';

/**
 * The model a generation uses. Presets name none (no model exists until someone registers one), so:
 * `model_parameters.llm_name` when given, else `GENERATION_LLM`, else the only enabled registered LLM.
 * Anything else is a 400 that says what to configure.
 */
@Injectable()
export class GenerationModels {
  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
  ) {}

  /** The registered name of the model to use; a 400 on `field` (`generation.model_parameters.llm_name`) when none resolves. */
  async resolve(requested?: string, field = LLM_FIELD): Promise<string> {
    if (requested !== undefined) return this.usable(requested, `No registered LLM is named "${requested}": GET /v2/llms lists them`, field);
    const configured = this.configured();
    if (configured) return this.usable(configured, `GENERATION_LLM is "${configured}", which is not a registered LLM: register it with POST /v2/llms or change GENERATION_LLM`, field);
    const enabled = await this.reads.find<LlmRow>(LLMS, { where: [{ field: 'enabled', op: 'eq', value: true }], limit: 2 });
    if (enabled.items.length === 1) return enabled.items[0].name;
    const problem = enabled.items.length === 0 ? 'Generation needs a language model and no LLM is registered' : 'Several LLMs are registered and none is chosen for generation';
    throw invalid('generation.no_model', `${problem}: ${HOW}`, { [LLM_FIELD]: `${problem.toLowerCase()}; ${HOW}` });
  }

  /** The model generation would use now without a request naming one, for listings; undefined when none resolves. */
  async current(): Promise<string | undefined> {
    try {
      return await this.resolve();
    } catch (e) {
      if (e instanceof DomainError && e.kind === 'invalid') return undefined;
      throw e;
    }
  }

  private configured(): string | undefined {
    const name = this.config.env.GENERATION_LLM?.trim();
    return name ? name : undefined;
  }

  private async usable(name: string, unknown: string, field: string): Promise<string> {
    const row = await findLlm(this.reads, name);
    if (!row) throw invalid('generation.unknown_model', unknown, { [field]: unknown });
    if (!row.enabled) throw invalid('generation.model_disabled', `LLM "${row.name}" is disabled: enable it with PATCH /v2/llms/${row.id}`, { [field]: 'disabled' });
    return row.name;
  }
}
