import { Inject, Injectable } from '@nestjs/common';
import { CommandContext, ConcurrencyError, conflict, DomainError, EVENT_STORE, EventStore, ID_GENERATOR, IdGenerator, invalid, PROJECTION_PROGRESS, ProjectionProgress, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig, StreamWriter, streamId, toNewEvents } from '@lib/platform';
import type { GenerationPresetEvent, PresetSettings } from '@lib/llms/events';
import { customerPresetView, GENERATION_PRESETS, GenerationPresetRow, LLMS } from '@lib/llms/read-models';
import { decideCreatePreset, decideDeletePreset, decideReplacePreset, presetFold, presetNotFound, PresetState } from '@lib/llms';
import { findPreset, GENERATION_PRESETS as BUILT_IN, GenerationPreset } from '../../domain/presets';
import { PromptTemplate } from '../prompt/prompt-template';

const presetStream = (id: string) => streamId('generation_preset', id);
const nameStream = (name: string) => streamId('generation_preset_name', name);

/**
 * Customer generation presets (`POST/PUT/DELETE /v2/generation_presets`, docs/generation.md): names are unique
 * across the built-in presets and the customer's (a name is taken at a stream's expected revision, so two
 * creations cannot both get it); the built-in presets stay read-only.
 */
@Injectable()
export class CustomerPresets {
  constructor(
    private readonly streams: StreamWriter,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  private async check(settings: PresetSettings): Promise<void> {
    PromptTemplate.compile(settings.prompt_template, 'prompt_template');
    const llm = await this.reads.find(LLMS, { where: [{ field: 'name', op: 'eq', value: settings.llm_name }], limit: 1 });
    if (!llm.items.length) throw invalid('generation_preset.unknown_llm', `Invalid llm_name: no registered model "${settings.llm_name}" (GET /v2/llms lists them)`, { llm_name: 'no such model' });
  }

  /** Takes `name` for `id`, or 409; a name whose preset is gone is free again. */
  private async takeName(name: string, id: string, ctx: CommandContext): Promise<void> {
    if (findPreset(name)) throw conflict('generation_preset.name_taken', `The name "${name}" is a built-in preset's`);
    const stream = nameStream(name);
    const history = await this.events.readStream(stream);
    const last = history[history.length - 1];
    if (last?.type === 'PresetNameTaken' && (last.data as { id: string }).id !== id && (await this.reads.get(GENERATION_PRESETS, (last.data as { id: string }).id))) {
      throw conflict('generation_preset.name_taken', `A generation preset named "${name}" exists`);
    }
    try {
      await this.events.append(stream, toNewEvents([{ type: 'PresetNameTaken', data: { name, id } }], ctx, stream, 1), { expectedRevision: last ? last.revision : 'no_stream' });
    } catch (e) {
      if (e instanceof ConcurrencyError) throw conflict('generation_preset.name_taken', `A generation preset named "${name}" exists`);
      throw e;
    }
  }

  private async write(id: string, decide: (s: PresetState) => GenerationPresetEvent[], ctx: CommandContext): Promise<void> {
    const { position } = await this.streams.write<PresetState, GenerationPresetEvent>(presetStream(id), presetFold, decide, ctx, ['generation_presets']);
    await this.progress.waitFor(position, ['generation_presets'], this.config.readYourWritesTimeoutMs);
  }

  async create(settings: PresetSettings, ctx: CommandContext): Promise<Record<string, unknown>> {
    await this.check(settings);
    const id = `gnp_c_${this.ids.uuid().replace(/-/g, '').slice(0, 20)}`;
    await this.takeName(settings.name, id, ctx);
    await this.write(id, (s) => decideCreatePreset(s, id, settings, ctx.now), ctx);
    return this.get(id);
  }

  async replace(id: string, settings: PresetSettings, ctx: CommandContext): Promise<Record<string, unknown>> {
    if (BUILT_IN.some((p) => p.id === id)) throw new DomainError('forbidden', 'generation_preset.built_in', `Generation preset "${id}" is built in and cannot be changed: create your own`);
    const row = await this.row(id);
    await this.check(settings);
    if (row.name !== settings.name) await this.takeName(settings.name, id, ctx);
    await this.write(id, (s) => decideReplacePreset(s, id, settings, ctx.now), ctx);
    return this.get(id);
  }

  async remove(id: string, ctx: CommandContext): Promise<void> {
    if (BUILT_IN.some((p) => p.id === id)) throw new DomainError('forbidden', 'generation_preset.built_in', `Generation preset "${id}" is built in and cannot be deleted`);
    await this.write(id, (s) => decideDeletePreset(s, id, ctx.now), ctx);
  }

  async get(id: string): Promise<Record<string, unknown>> {
    return customerPresetView(await this.row(id));
  }

  private async row(id: string): Promise<GenerationPresetRow> {
    const row = await this.reads.get<GenerationPresetRow>(GENERATION_PRESETS, id);
    if (!row) throw presetNotFound(id);
    return row;
  }

  async all(): Promise<GenerationPresetRow[]> {
    return (await this.reads.find<GenerationPresetRow>(GENERATION_PRESETS, { limit: 1000 })).items;
  }

  /** A customer preset by name, as generation uses it (enabled ones only). */
  async named(name: string): Promise<GenerationPreset | undefined> {
    const rows = await this.reads.find<GenerationPresetRow>(GENERATION_PRESETS, { where: [{ field: 'name', op: 'eq', value: name }], limit: 1 });
    const row = rows.items[0];
    return row && row.settings.enabled ? asPreset(row) : undefined;
  }

  /** The enabled customer preset marked `default` for a model, if any. */
  async defaultFor(llmName: string): Promise<GenerationPreset | undefined> {
    const row = (await this.all()).find((r) => r.settings.default && r.settings.enabled && r.settings.llm_name === llmName);
    return row ? asPreset(row) : undefined;
  }
}

/** A customer preset in the shape generation uses; unset numbers fall back to the built-in default's. */
function asPreset(row: GenerationPresetRow): GenerationPreset & { readonly llmName: string } {
  const s = row.settings;
  const base = BUILT_IN.find((p) => p.default)!;
  return {
    id: row.id,
    name: s.name,
    description: s.description ?? '',
    promptTemplate: s.prompt_template,
    maxUsedSearchResults: s.max_used_search_results ?? base.maxUsedSearchResults,
    maxTokens: s.max_tokens ?? base.maxTokens,
    temperature: s.temperature ?? base.temperature,
    frequencyPenalty: s.frequency_penalty ?? base.frequencyPenalty,
    presencePenalty: s.presence_penalty ?? base.presencePenalty,
    default: s.default,
    llmName: s.llm_name,
  };
}
