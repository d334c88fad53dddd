import { collection } from '@lib/platform/projections';
import type { PresetSettings } from '../domain/generation-preset';

/** One row per customer generation preset (projections/llms/generation-presets), keyed by id; names are unique. */
export type GenerationPresetRow = {
  readonly id: string;
  readonly name: string;
  readonly settings: PresetSettings;
  readonly created_at: string;
  readonly updated_at: string;
};

export const GENERATION_PRESETS = collection<GenerationPresetRow>('generation_presets');

/** The reference's GenerationPreset, `ownership: customer`. */
export function customerPresetView(row: GenerationPresetRow): Record<string, unknown> {
  return { id: row.id, ...row.settings, ownership: 'customer' };
}
