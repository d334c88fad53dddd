import { collection } from '@lib/platform/projections';
import type { AliasSettings } from '../domain/alias';

/** One row per alias (projections/aliases/aliases); `agent_keys`: every agent its policy can route to. */
export type AliasRow = {
  readonly id: string;
  readonly name: string;
  readonly enabled: boolean;
  readonly settings: AliasSettings;
  readonly agent_keys: readonly string[];
  /** The running canary, as routing reads it (docs/aliases.md, "Canary"); `from_position`: where its start is in the log. */
  readonly canary?: AliasCanaryRow | null;
  readonly created_at: string;
  readonly updated_at: string;
};

export interface AliasCanaryRow {
  readonly id: string;
  readonly candidate_agent_key: string;
  readonly control_agent_key: string;
  readonly weight: number;
  readonly from_position: number;
}

export const ALIASES = collection<AliasRow>('agent_aliases');

/** The reference's AgentAlias. */
export function aliasView(row: AliasRow): Record<string, unknown> {
  const s = row.settings;
  return { key: row.id, name: s.name, description: s.description ?? null, policy: s.policy, enabled: s.enabled, metadata: s.metadata ?? null, created_at: row.created_at, updated_at: row.updated_at };
}
