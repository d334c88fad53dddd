import { assertNever, invalid, notFound } from '@lib/platform/kernel';
import type { ToolConfig } from '@lib/tools/domain';
import type { AgentSkill } from './skills';
import { AgentConfig, normaliseStep, StepConfig, validateAgentConfig } from './agent-config';

export type AgentEvent =
  | { type: 'AgentCreated'; data: { agentId: string; agentKey: string; config: AgentConfig; createdAt: string } }
  /** The whole configuration after the change (PATCH merged, or PUT's replacement): a reader needs no earlier event. */
  /** `restoredFrom`: the revision a restore copied (`POST …/revisions/{n}/restore`; issue 45). */
  | { type: 'AgentUpdated'; data: { agentId: string; agentKey: string; config: AgentConfig; replaced: boolean; updatedAt: string; restoredFrom?: number } }
  | { type: 'AgentDeleted'; data: { agentId: string; agentKey: string; deletedAt: string } };

export const AGENT_EVENT_TYPES = ['AgentCreated', 'AgentUpdated', 'AgentDeleted'] as const;

export type AgentState =
  | { readonly status: 'absent' }
  | { readonly status: 'active'; readonly agentId: string; readonly key: string; readonly config: AgentConfig; readonly createdAt: string; readonly revision: number };

export type ActiveAgent = Extract<AgentState, { status: 'active' }>;

export const agentFold = {
  initialState: { status: 'absent' } as AgentState,
  evolve(state: AgentState, event: AgentEvent): AgentState {
    switch (event.type) {
      case 'AgentCreated':
        return { status: 'active', agentId: event.data.agentId, key: event.data.agentKey, config: event.data.config, createdAt: event.data.createdAt, revision: 0 };
      case 'AgentUpdated':
        return state.status === 'absent' ? state : { ...state, config: event.data.config, revision: state.revision + 1 };
      case 'AgentDeleted':
        return { status: 'absent' };
      default:
        return assertNever(event);
    }
  },
};

export const agentNotFound = (key: string) => notFound('agent.not_found', `Agent "${key}" does not exist`, key);

/** A create or replace request's body, as the edge validated it (snake_case, the reference's fields). */
export type AgentRequest = Omit<AgentConfig, 'first_step_name' | 'steps' | 'metadata' | 'enabled' | 'tool_configurations'> & {
  /** Omitted: the agent has no tools (the reference requires the field; docs/conformance.md). */
  readonly tool_configurations?: AgentConfig['tool_configurations'];
  readonly first_step?: Record<string, unknown> & { readonly name?: string };
  readonly first_step_name?: string;
  readonly steps?: Record<string, Record<string, unknown>>;
  readonly metadata?: Record<string, unknown>;
  readonly enabled?: boolean;
};

/**
 * A create or replace request as a configuration: the deprecated inline `first_step` becomes a step of `steps`
 * (allowed beside `first_step_name` only when the names match and the step is the same, as the reference says).
 */
export function configFromRequest(req: AgentRequest): AgentConfig {
  const steps: Record<string, StepConfig> = {};
  for (const [name, step] of Object.entries(req.steps ?? {})) steps[name] = normaliseStep(step);
  let first = req.first_step_name;
  if (req.first_step) {
    const name = req.first_step.name ?? 'first_step';
    const step = normaliseStep(req.first_step);
    if (first !== undefined && first !== name) throw invalid('agent.invalid', 'first_step_name must equal first_step.name when both are given (first_step is deprecated: define the step in steps)', { first_step_name: `differs from first_step.name (${name})` });
    if (steps[name] && JSON.stringify(steps[name]) !== JSON.stringify(step)) throw invalid('agent.invalid', `steps.${name} differs from first_step: define the step once`, { [`steps.${name}`]: 'differs from first_step' });
    steps[name] = step;
    first = name;
  }
  if (first === undefined) throw invalid('agent.invalid', 'first_step_name is required (or the deprecated first_step)', { first_step_name: 'first_step_name is required (or the deprecated first_step)' });
  const { first_step: _f, first_step_name: _n, steps: _s, ...rest } = req;
  return stripUndefined({ ...rest, tool_configurations: req.tool_configurations ?? {}, first_step_name: first, steps, metadata: req.metadata ?? {}, enabled: req.enabled ?? true }) as unknown as AgentConfig;
}

/**
 * A PATCH over the current configuration, as the reference's UpdateAgentRequest says: omitted fields are kept,
 * `null` clears (`enabled: null` is the default, true); `tool_configurations` and `steps` merge by key (a null
 * value deletes that key; a step's own fields merge the same way), `skills` too (a skill given replaces that skill);
 * `model` and `llm_quota` are replaced whole.
 */
export function mergeAgentPatch(current: AgentConfig, patch: Record<string, unknown>): AgentConfig {
  const next: Record<string, unknown> = { ...current };
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    switch (field) {
      case 'tool_configurations':
        next.tool_configurations = value === null ? {} : mergeMap(current.tool_configurations, value as Record<string, unknown>, (_old, v) => v as ToolConfig);
        break;
      case 'skills':
        // A value replaces that skill whole (the reference's AgentSkill has no partial form); null deletes it.
        if (value === null) delete next.skills;
        else next.skills = mergeMap(current.skills ?? {}, value as Record<string, unknown>, (_old, v) => v as AgentSkill);
        break;
      case 'steps':
        next.steps = value === null ? {} : mergeMap(current.steps, value as Record<string, unknown>, (old, v) => normaliseStep(mergeFields(old ?? {}, v as Record<string, unknown>)));
        break;
      case 'first_step': {
        const given = value as Record<string, unknown> & { name?: string };
        const oldName = current.first_step_name;
        const name = given.name ?? oldName;
        const merged = normaliseStep(mergeFields(current.steps[oldName] ?? {}, given));
        const steps: Record<string, StepConfig> = { ...(next.steps as Record<string, StepConfig>) };
        if (name !== oldName) delete steps[oldName];
        steps[name] = merged;
        next.steps = steps;
        next.first_step_name = name;
        break;
      }
      case 'enabled':
        next.enabled = value ?? true;
        break;
      case 'metadata':
        next.metadata = value ?? {};
        break;
      default:
        if (value === null) delete next[field];
        else next[field] = value;
    }
  }
  if (typeof patch.first_step_name === 'string') next.first_step_name = patch.first_step_name;
  return next as unknown as AgentConfig;
}

function mergeMap<T>(current: Readonly<Record<string, T>>, patch: Record<string, unknown>, merge: (old: T | undefined, v: unknown) => T): Record<string, T> {
  const out: Record<string, T> = { ...current };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = merge(current[k], v);
  }
  return out;
}

function mergeFields(old: object, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...old };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if (v !== undefined) out[k] = v;
  }
  return out;
}

const stripUndefined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

export function decideCreateAgent(state: AgentState, command: { agentId: string; agentKey: string; config: AgentConfig }, now: Date): AgentEvent[] {
  if (state.status !== 'absent') throw invalid('agent.key_taken', `An agent with key "${command.agentKey}" already exists: use another key`, { key: 'already taken' });
  validateAgentConfig(command.config);
  return [{ type: 'AgentCreated', data: { ...command, createdAt: now.toISOString() } }];
}

/** `change` gives the whole next configuration from the current one (a merge or a replacement). */
export function decideUpdateAgent(state: AgentState, key: string, change: (current: AgentConfig) => AgentConfig, replaced: boolean, now: Date): AgentEvent[] {
  if (state.status === 'absent') throw agentNotFound(key);
  const config = change(state.config);
  validateAgentConfig(config);
  if (JSON.stringify(config) === JSON.stringify(state.config)) return [];
  return [{ type: 'AgentUpdated', data: { agentId: state.agentId, agentKey: key, config, replaced, updatedAt: now.toISOString() } }];
}

export function decideDeleteAgent(state: AgentState, key: string, now: Date): AgentEvent[] {
  if (state.status === 'absent') throw agentNotFound(key);
  return [{ type: 'AgentDeleted', data: { agentId: state.agentId, agentKey: key, deletedAt: now.toISOString() } }];
}
