import { assertNever, conflict, invalid, notFound } from '@lib/platform';
import type { StoredAuth } from './auth';
import type { LlmCapabilities } from './capabilities';
import { Quota, quotaProblems } from './quota';

/** Provider types this service can call. The reference API also lists vertex-ai and anthropic (docs/llms.md). */
export const LLM_TYPES = ['openai-compatible'] as const;
export type LlmType = (typeof LLM_TYPES)[number];

export const MAX_IDLE_TIMEOUT_SECONDS = 3600;

/** A registered model's configuration. `auth` holds only identifiers and ciphertext (never a secret in clear). */
export interface LlmSettings {
  readonly type: LlmType;
  readonly model: string;
  readonly uri: string;
  readonly description: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Null: the provider default read timeout applies. */
  readonly idleTimeoutSeconds: number | null;
  readonly capabilities: LlmCapabilities;
  readonly quota: Quota | null;
  readonly enabled: boolean;
  readonly auth: StoredAuth | null;
}

export type LlmEvent =
  | { type: 'LlmCreated'; data: { llmId: string; name: string; settings: LlmSettings; createdAt: string } }
  /** `changes`: only the fields that changed; `auth` present means a rotated credential. */
  | { type: 'LlmUpdated'; data: { llmId: string; name: string; changes: Partial<LlmSettings>; updatedAt: string } }
  | { type: 'LlmDeleted'; data: { llmId: string; name: string; deletedAt: string } };

export const LLM_EVENT_TYPES = ['LlmCreated', 'LlmUpdated', 'LlmDeleted'] as const;

export type LlmState = { readonly status: 'absent' } | { readonly status: 'active'; readonly llmId: string; readonly name: string; readonly settings: LlmSettings };

export const llmFold = {
  initialState: { status: 'absent' } as LlmState,
  evolve(state: LlmState, event: LlmEvent): LlmState {
    switch (event.type) {
      case 'LlmCreated':
        return { status: 'active', llmId: event.data.llmId, name: event.data.name, settings: event.data.settings };
      case 'LlmUpdated':
        return state.status === 'absent' ? state : { ...state, settings: { ...state.settings, ...event.data.changes } };
      case 'LlmDeleted':
        return { status: 'absent' };
      default:
        return assertNever(event);
    }
  },
};

export const llmNotFound = (nameOrId: string) => notFound('llm.not_found', `LLM "${nameOrId}" does not exist`, nameOrId);

/** Header names that carry credentials belong in `auth`, where they are encrypted and masked. */
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|x-api-key|api-key|cookie)$|token|secret|password|key$/i;

/** Checks the rules class-validator cannot express; throws `invalid` with field errors. */
export function validateSettings(settings: Partial<LlmSettings>): void {
  const problems: Record<string, string> = {};
  for (const name of Object.keys(settings.headers ?? {})) {
    if (CREDENTIAL_HEADER.test(name)) problems[`headers.${name}`] = 'looks like a credential: send it as auth {"type":"header","header":…,"value":…} so it is encrypted and masked';
  }
  if (settings.quota) Object.assign(problems, quotaProblems(settings.quota));
  if (settings.uri !== undefined) {
    try {
      if (!['http:', 'https:'].includes(new URL(settings.uri).protocol)) problems.uri = 'must be an http or https URL';
    } catch {
      problems.uri = 'must be an absolute http or https URL';
    }
  }
  const first = Object.entries(problems)[0];
  if (first) throw invalid('llm.invalid', `Invalid ${first[0]}: ${first[1]}`, problems);
}

export function decideCreateLlm(state: LlmState, command: { llmId: string; name: string; settings: LlmSettings }, now: Date): LlmEvent[] {
  if (state.status !== 'absent') throw conflict('llm.name_taken', `An LLM named "${command.name}" already exists`);
  validateSettings(command.settings);
  return [{ type: 'LlmCreated', data: { ...command, createdAt: now.toISOString() } }];
}

/** Only the fields that differ are recorded; a PATCH that changes nothing appends nothing. */
export function decideUpdateLlm(state: LlmState, name: string, requested: Partial<LlmSettings>, now: Date): LlmEvent[] {
  if (state.status === 'absent') throw llmNotFound(name);
  validateSettings(requested);
  const changes = Object.fromEntries(
    Object.entries(requested).filter(([k, v]) => v !== undefined && JSON.stringify(v) !== JSON.stringify(state.settings[k as keyof LlmSettings])),
  ) as Partial<LlmSettings>;
  if (Object.keys(changes).length === 0) return [];
  return [{ type: 'LlmUpdated', data: { llmId: state.llmId, name: state.name, changes, updatedAt: now.toISOString() } }];
}

export function decideDeleteLlm(state: LlmState, name: string, now: Date): LlmEvent[] {
  if (state.status === 'absent') throw llmNotFound(name);
  return [{ type: 'LlmDeleted', data: { llmId: state.llmId, name: state.name, deletedAt: now.toISOString() } }];
}
