import { assertNever, conflict, invalid, notFound } from '@lib/platform/kernel';
import type { ToolConfig } from './tool-config';

/**
 * A tool a user defines at `/v2/tools` (stream `user_tool-<id>`, id `tol_<name>`): a Python lambda run in the
 * sandbox (docs/lambda-tools.md; the code's schemas are discovered when it is created or its code changes), or a
 * client tool.
 */
export interface LambdaToolSettings {
  readonly type: 'lambda';
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly language: 'python';
  readonly code: string;
  readonly execution_configuration?: { readonly max_execution_time_seconds?: number; readonly max_memory_mb?: number };
  /** Tools the code calls as `tool.<name>(...)`: private to the lambda, no session events. */
  readonly tool_configurations?: Readonly<Record<string, ToolConfig>>;
  readonly input_schema: Record<string, unknown>;
  readonly output_schema?: Record<string, unknown>;
  readonly enabled: boolean;
}

/** A tool the calling client runs (`type: client`): the model's arguments go out in `tool_input`, the client answers. */
export interface ClientToolSettings {
  readonly type: 'client';
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  /** The arguments the model fills. */
  readonly input_schema?: Record<string, unknown>;
  /** What the client must submit as the tool output (checked when it does). */
  readonly output_schema?: Record<string, unknown>;
  readonly enabled: boolean;
}

export type UserToolSettings = LambdaToolSettings | ClientToolSettings;

export type UserToolEvent =
  | { type: 'UserToolCreated'; data: { id: string; settings: UserToolSettings; createdAt: string } }
  | { type: 'UserToolUpdated'; data: { id: string; settings: UserToolSettings; updatedAt: string } }
  | { type: 'UserToolDeleted'; data: { id: string; deletedAt: string } };

export type UserToolState = { readonly status: 'absent' } | { readonly status: 'active'; readonly settings: UserToolSettings };

export const userToolFold = {
  initialState: { status: 'absent' } as UserToolState,
  evolve(_state: UserToolState, event: UserToolEvent): UserToolState {
    switch (event.type) {
      case 'UserToolCreated':
      case 'UserToolUpdated':
        return { status: 'active', settings: event.data.settings };
      case 'UserToolDeleted':
        return { status: 'absent' };
      default:
        return assertNever(event);
    }
  },
};

export const userToolId = (name: string): string => `tol_${name}`;
export const userToolNotFound = (id: string) => notFound('tool.not_found', `Tool "${id}" does not exist`, id);

/** Longest a lambda may run (the spec's execution ceiling), the default, and the default with composed tools. */
export const LAMBDA_CEILING_S = 21_600;
export const LAMBDA_DEFAULT_S = 30;
export const LAMBDA_COMPOSED_DEFAULT_S = 300;
/** How deep lambdas may call lambdas through their tool_configurations. */
export const LAMBDA_MAX_DEPTH = 3;

/**
 * The wall-clock bound of one run: the agent's tool configuration first, then the tool's own, then the default;
 * never past the service's cap (LAMBDA_MAX_DEADLINE_SECONDS), whatever was stored before it was set.
 */
export function lambdaDeadlineSeconds(settings: LambdaToolSettings, configured?: unknown, capSeconds = LAMBDA_CEILING_S): number {
  const own = settings.execution_configuration?.max_execution_time_seconds;
  const chosen = typeof configured === 'number' ? configured : typeof own === 'number' ? own : Object.keys(settings.tool_configurations ?? {}).length ? LAMBDA_COMPOSED_DEFAULT_S : LAMBDA_DEFAULT_S;
  return Math.min(chosen, capSeconds);
}

/** A lambda's own `max_execution_time_seconds` past the service's cap: the 400's field errors, or none. */
export function lambdaDeadlineProblems(executionConfiguration: { readonly max_execution_time_seconds?: number } | undefined, capSeconds: number): Record<string, string> {
  const own = executionConfiguration?.max_execution_time_seconds;
  return typeof own === 'number' && own > capSeconds ? { 'execution_configuration.max_execution_time_seconds': `at most ${capSeconds} seconds on this service (LAMBDA_MAX_DEADLINE_SECONDS)` } : {};
}

export function decideCreateUserTool(state: UserToolState, id: string, settings: UserToolSettings, now: Date): UserToolEvent[] {
  if (state.status !== 'absent') throw conflict('tool.exists', `A tool named "${settings.name}" already exists`);
  return [{ type: 'UserToolCreated', data: { id, settings, createdAt: now.toISOString() } }];
}

export function decideUpdateUserTool(state: UserToolState, id: string, change: (current: UserToolSettings) => UserToolSettings, now: Date): UserToolEvent[] {
  if (state.status === 'absent') throw userToolNotFound(id);
  return [{ type: 'UserToolUpdated', data: { id, settings: change(state.settings), updatedAt: now.toISOString() } }];
}

export function decideDeleteUserTool(state: UserToolState, id: string, now: Date): UserToolEvent[] {
  if (state.status === 'absent') throw userToolNotFound(id);
  return [{ type: 'UserToolDeleted', data: { id, deletedAt: now.toISOString() } }];
}

/** The code was checked in the sandbox and found wanting: a 400 listing why. */
export const invalidLambda = (errors: readonly string[]) => invalid('tool.invalid_code', `Invalid code: ${errors.join('; ')}`, { code: errors.join('; ') });
