import { assertNever, conflict, invalid, notFound } from '@lib/platform/kernel';
import { ToolConfig, toolProblems } from './tool-config';

/**
 * A reusable tool configuration (`/v2/tool_configurations`, stream `tool_configuration-<key>`): a tool's settings
 * with an identity (`name`, `description`, `enabled`, `metadata`), attached to agents by a `reference` entry.
 */
export type ReusableToolConfig = ToolConfig & {
  readonly name: string;
  readonly description?: string;
  readonly enabled: boolean;
  readonly metadata: Readonly<Record<string, unknown>>;
  /** Usable only by session enrichment (issue 15, later): never offered to the model mid-conversation. */
  readonly enrichment_only?: boolean;
};

export type ToolConfigurationEvent =
  | { type: 'ToolConfigurationCreated'; data: { key: string; config: ReusableToolConfig; createdAt: string } }
  | { type: 'ToolConfigurationUpdated'; data: { key: string; config: ReusableToolConfig; updatedAt: string } }
  | { type: 'ToolConfigurationDeleted'; data: { key: string; deletedAt: string } };

export type ToolConfigurationState = { readonly status: 'absent' } | { readonly status: 'active'; readonly config: ReusableToolConfig; readonly createdAt: string };

export const toolConfigurationFold = {
  initialState: { status: 'absent' } as ToolConfigurationState,
  evolve(state: ToolConfigurationState, event: ToolConfigurationEvent): ToolConfigurationState {
    switch (event.type) {
      case 'ToolConfigurationCreated':
        return { status: 'active', config: event.data.config, createdAt: event.data.createdAt };
      case 'ToolConfigurationUpdated':
        return state.status === 'absent' ? state : { ...state, config: event.data.config };
      case 'ToolConfigurationDeleted':
        return { status: 'absent' };
      default:
        return assertNever(event);
    }
  },
};

export const toolConfigurationNotFound = (key: string) => notFound('tool_configuration.not_found', `Tool configuration "${key}" does not exist`, key);

function validate(config: ReusableToolConfig): void {
  const problems = toolProblems('body', config.name, config, 'reusable');
  const renamed = Object.fromEntries(Object.entries(problems).map(([k, v]) => [k.replace(/^body\.?/, '') || 'body', v]));
  const first = Object.entries(renamed)[0];
  if (first) throw invalid('tool_configuration.invalid', `Invalid ${first[0]}: ${first[1]}`, renamed);
}

export function decideCreateToolConfiguration(state: ToolConfigurationState, key: string, config: ReusableToolConfig, now: Date): ToolConfigurationEvent[] {
  if (state.status !== 'absent') throw conflict('tool_configuration.key_taken', `A tool configuration with key "${key}" already exists`);
  validate(config);
  return [{ type: 'ToolConfigurationCreated', data: { key, config, createdAt: now.toISOString() } }];
}

/** A PATCH: given fields replace the stored ones, `null` clears one (`enabled: null` is true); `type` cannot change. */
export function decideUpdateToolConfiguration(state: ToolConfigurationState, key: string, patch: Record<string, unknown>, now: Date): ToolConfigurationEvent[] {
  if (state.status === 'absent') throw toolConfigurationNotFound(key);
  if (patch.type !== undefined && patch.type !== state.config.type) throw invalid('tool_configuration.invalid', `Invalid type: a tool configuration keeps its type (${state.config.type}); create another`, { type: 'cannot change' });
  const next: Record<string, unknown> = { ...state.config };
  for (const [field, value] of Object.entries(patch)) {
    if (field === 'key' || value === undefined) continue;
    if (value === null) {
      if (field === 'enabled') next.enabled = true;
      else if (field === 'metadata') next.metadata = {};
      else if (field !== 'name') delete next[field];
    } else next[field] = value;
  }
  const config = next as ReusableToolConfig;
  validate(config);
  if (JSON.stringify(config) === JSON.stringify(state.config)) return [];
  return [{ type: 'ToolConfigurationUpdated', data: { key, config, updatedAt: now.toISOString() } }];
}

export function decideDeleteToolConfiguration(state: ToolConfigurationState, key: string, now: Date): ToolConfigurationEvent[] {
  if (state.status === 'absent') throw toolConfigurationNotFound(key);
  return [{ type: 'ToolConfigurationDeleted', data: { key, deletedAt: now.toISOString() } }];
}
