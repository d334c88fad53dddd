import { assertNever, conflict, notFound } from '@lib/platform/kernel';

/**
 * A generation preset a customer made (`/v2/generation_presets`, stream `generation_preset-<id>`): a prompt
 * template and sampling defaults for a named model. The built-in presets are not events: they ship with the
 * service and cannot be changed (docs/generation.md).
 */
export interface PresetSettings {
  readonly name: string;
  readonly description?: string;
  readonly llm_name: string;
  readonly prompt_template: string;
  readonly max_used_search_results?: number;
  readonly max_tokens?: number;
  readonly temperature?: number;
  readonly frequency_penalty?: number;
  readonly presence_penalty?: number;
  readonly additional_model_params?: Readonly<Record<string, unknown>>;
  readonly enabled: boolean;
  readonly default: boolean;
}

export type GenerationPresetEvent =
  | { type: 'GenerationPresetCreated'; data: { id: string; settings: PresetSettings; createdAt: string } }
  | { type: 'GenerationPresetReplaced'; data: { id: string; settings: PresetSettings; replacedAt: string } }
  | { type: 'GenerationPresetDeleted'; data: { id: string; name: string; deletedAt: string } };

export type PresetState = { readonly status: 'absent' } | { readonly status: 'active'; readonly settings: PresetSettings };

export const presetFold = {
  initialState: { status: 'absent' } as PresetState,
  evolve(_s: PresetState, e: GenerationPresetEvent): PresetState {
    switch (e.type) {
      case 'GenerationPresetCreated':
      case 'GenerationPresetReplaced':
        return { status: 'active', settings: e.data.settings };
      case 'GenerationPresetDeleted':
        return { status: 'absent' };
      default:
        return assertNever(e);
    }
  },
};

export const presetNotFound = (id: string) => notFound('generation_preset.not_found', `Generation preset "${id}" does not exist`, id);

export function decideCreatePreset(s: PresetState, id: string, settings: PresetSettings, now: Date): GenerationPresetEvent[] {
  if (s.status !== 'absent') throw conflict('generation_preset.exists', `Generation preset "${id}" exists`);
  return [{ type: 'GenerationPresetCreated', data: { id, settings, createdAt: now.toISOString() } }];
}

export function decideReplacePreset(s: PresetState, id: string, settings: PresetSettings, now: Date): GenerationPresetEvent[] {
  if (s.status !== 'active') throw presetNotFound(id);
  return [{ type: 'GenerationPresetReplaced', data: { id, settings, replacedAt: now.toISOString() } }];
}

export function decideDeletePreset(s: PresetState, id: string, now: Date): GenerationPresetEvent[] {
  if (s.status !== 'active') throw presetNotFound(id);
  return [{ type: 'GenerationPresetDeleted', data: { id, name: s.settings.name, deletedAt: now.toISOString() } }];
}
