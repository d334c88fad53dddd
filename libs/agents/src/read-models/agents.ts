import { collection } from '@lib/platform/projections';
import type { AgentConfig } from '../domain/agent-config';
import type { AgentEvent } from '../domain/agent';

/** One row per agent, keyed by agent key (projections/agents). */
export type AgentRow = {
  readonly id: string;
  readonly agent_id: string;
  readonly name: string;
  readonly description: string;
  readonly enabled: boolean;
  readonly config: AgentConfig;
  /** `<instruction id>` of every instruction the steps refer to (a used instruction cannot be deleted). */
  readonly instruction_ids: readonly string[];
  /** `<instruction id>@<version>` of every pinned reference (a used version cannot be deleted). */
  readonly instruction_versions: readonly string[];
  /** Keys of the reusable tool configurations its `reference` entries name (a used one cannot be deleted). */
  readonly tool_configuration_keys: readonly string[];
  readonly created_at: string;
  readonly updated_at: string;
  readonly position: number;
};

export const AGENTS = collection<AgentRow>('agents');

type Created = Extract<AgentEvent, { type: 'AgentCreated' }>['data'];
type Updated = Extract<AgentEvent, { type: 'AgentUpdated' }>['data'];

function references(config: AgentConfig): Pick<AgentRow, 'instruction_ids' | 'instruction_versions' | 'tool_configuration_keys'> {
  const refs = Object.values(config.steps).flatMap((s) => s.instructions.filter((i) => i.type === 'reference'));
  const tools = Object.values(config.tool_configurations).filter((t) => t.type === 'reference' && typeof t.tool_configuration_key === 'string');
  return {
    instruction_ids: [...new Set(refs.map((r) => r.id))],
    instruction_versions: [...new Set(refs.filter((r) => r.version !== undefined).map((r) => `${r.id}@${r.version}`))],
    tool_configuration_keys: [...new Set(tools.map((t) => t.tool_configuration_key as string))],
  };
}

export const agentRow = (d: Created, position: number): AgentRow => ({
  id: d.agentKey,
  agent_id: d.agentId,
  name: d.config.name,
  description: d.config.description ?? '',
  enabled: d.config.enabled,
  config: d.config,
  ...references(d.config),
  created_at: d.createdAt,
  updated_at: d.createdAt,
  position,
});

export const agentChanges = (d: Updated, position: number): Partial<AgentRow> => ({
  name: d.config.name,
  description: d.config.description ?? '',
  enabled: d.config.enabled,
  config: d.config,
  ...references(d.config),
  updated_at: d.updatedAt,
  position,
});

/** The reference API's Agent: the configuration, with `first_step` shown as the entry step (deprecated field). */
export function agentView(row: Pick<AgentRow, 'id' | 'config' | 'created_at' | 'updated_at'>): Record<string, unknown> {
  const { first_step_name, steps, ...rest } = row.config;
  return {
    key: row.id,
    ...rest,
    first_step: { name: first_step_name, ...steps[first_step_name] },
    first_step_name,
    steps,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
