import { assertNever, conflict, notFound } from '@lib/platform/kernel';
import type { TemplateType } from './agent-config';

/** What one version of an instruction holds; a version never changes once created. */
export interface InstructionContent {
  readonly name: string;
  readonly description: string;
  readonly templateType: TemplateType;
  readonly template: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly enabled: boolean;
}

export type InstructionEvent =
  | {
      type: 'InstructionVersionCreated';
      /** `supersedes`: the version that was the latest before this one (absent for the first). */
      data: InstructionContent & { instructionId: string; version: number; supersedes?: number; instructionCreatedAt: string; createdAt: string };
    }
  /** `latest`: the latest version once this one is gone (the projection marks it, whether it changed or not). */
  | { type: 'InstructionVersionDeleted'; data: { instructionId: string; version: number; latest: number; deletedAt: string } }
  /** `versions`: the versions that existed, so a reader removes them without a lookup. */
  | { type: 'InstructionDeleted'; data: { instructionId: string; versions: readonly number[]; deletedAt: string } };

export const INSTRUCTION_EVENT_TYPES = ['InstructionVersionCreated', 'InstructionVersionDeleted', 'InstructionDeleted'] as const;

export type InstructionState =
  | { readonly status: 'absent' }
  | {
      readonly status: 'active';
      readonly instructionId: string;
      readonly createdAt: string;
      /** Live versions by number. */
      readonly versions: Readonly<Record<number, InstructionContent>>;
      /** The highest number ever given: numbers are never reused, so a pin never silently points at other text. */
      readonly lastNumber: number;
    };

export const instructionFold = {
  initialState: { status: 'absent' } as InstructionState,
  evolve(state: InstructionState, event: InstructionEvent): InstructionState {
    switch (event.type) {
      case 'InstructionVersionCreated': {
        const { instructionId, version, supersedes: _s, instructionCreatedAt, createdAt: _c, ...content } = event.data;
        const versions = state.status === 'active' ? state.versions : {};
        return { status: 'active', instructionId, createdAt: instructionCreatedAt, versions: { ...versions, [version]: content }, lastNumber: version };
      }
      case 'InstructionVersionDeleted': {
        if (state.status === 'absent') return state;
        const { [event.data.version]: _gone, ...versions } = state.versions;
        return { ...state, versions };
      }
      case 'InstructionDeleted':
        return { status: 'absent' };
      default:
        return assertNever(event);
    }
  },
};

export const instructionNotFound = (id: string) => notFound('instruction.not_found', `Instruction "${id}" does not exist`, id);
export const versionNotFound = (id: string, version: number) => notFound('instruction.version_not_found', `Instruction "${id}" has no version ${version}`, id);

/** The latest live version's number (versions are numbered upwards, so the highest). */
export function latestVersion(state: Extract<InstructionState, { status: 'active' }>): number {
  return Math.max(...Object.keys(state.versions).map(Number));
}

/** A PATCH's fields: each given one replaces the latest version's (metadata whole); the rest are kept. */
export type InstructionChange = Partial<InstructionContent>;

export function applyInstructionChange(current: InstructionContent, change: InstructionChange): InstructionContent {
  const given = Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined && v !== null));
  return { ...current, ...given };
}

export function decideCreateInstruction(state: InstructionState, command: { instructionId: string; content: InstructionContent }, now: Date): InstructionEvent[] {
  if (state.status !== 'absent') throw conflict('instruction.id_taken', `An instruction with id "${command.instructionId}" already exists`);
  const at = now.toISOString();
  return [{ type: 'InstructionVersionCreated', data: { instructionId: command.instructionId, version: 1, ...command.content, instructionCreatedAt: at, createdAt: at } }];
}

/** A new version from the latest one and the change; a change that changes nothing makes no version (a retried PATCH). */
export function decideUpdateInstruction(state: InstructionState, command: { instructionId: string; change: InstructionChange }, now: Date): InstructionEvent[] {
  if (state.status === 'absent') throw instructionNotFound(command.instructionId);
  const latest = latestVersion(state);
  const content = applyInstructionChange(state.versions[latest], command.change);
  if (sameContent(content, state.versions[latest])) return [];
  const version = state.lastNumber + 1;
  return [{ type: 'InstructionVersionCreated', data: { instructionId: state.instructionId, version, supersedes: latest, ...content, instructionCreatedAt: state.createdAt, createdAt: now.toISOString() } }];
}

/**
 * Who uses the instruction, as the agents read model says when the command is made: `pinnedBy` the agents
 * that name this version, `latestUsedBy` those that name the instruction without a version (they run the latest).
 */
export interface InstructionUsage {
  readonly pinnedBy: readonly string[];
  readonly latestUsedBy: readonly string[];
}

/**
 * A version in use is kept: pinned by an agent, or the latest while an agent follows the latest (deleting it
 * would change that agent's instructions behind its back). The only version left is kept too: an instruction
 * without versions has nothing to show, so the caller deletes the instruction instead.
 */
export function decideDeleteInstructionVersion(state: InstructionState, command: { instructionId: string; version: number; usage: InstructionUsage }, now: Date): InstructionEvent[] {
  if (state.status === 'absent') throw instructionNotFound(command.instructionId);
  const { instructionId, version, usage } = command;
  if (!state.versions[version]) throw versionNotFound(instructionId, version);
  if (usage.pinnedBy.length) throw conflict('instruction.version_in_use', `Version ${version} of instruction "${instructionId}" is used by agent(s) ${usage.pinnedBy.join(', ')}: point them at another version first`);
  const latest = latestVersion(state);
  if (version === latest && usage.latestUsedBy.length) {
    throw conflict('instruction.version_in_use', `Version ${version} is the latest of instruction "${instructionId}", which agent(s) ${usage.latestUsedBy.join(', ')} use without a version: pin them to a version first`);
  }
  const remaining = Object.keys(state.versions).map(Number).filter((v) => v !== version);
  if (!remaining.length) throw conflict('instruction.last_version', `Version ${version} is the only version of instruction "${instructionId}": delete the instruction instead`);
  return [{ type: 'InstructionVersionDeleted', data: { instructionId, version, latest: Math.max(...remaining), deletedAt: now.toISOString() } }];
}

/** An instruction any agent refers to (with a version or without) is kept. */
export function decideDeleteInstruction(state: InstructionState, command: { instructionId: string; usedBy: readonly string[] }, now: Date): InstructionEvent[] {
  if (state.status === 'absent') throw instructionNotFound(command.instructionId);
  if (command.usedBy.length) throw conflict('instruction.in_use', `Instruction "${command.instructionId}" is used by agent(s) ${command.usedBy.join(', ')}: remove it from their steps first`);
  const versions = Object.keys(state.versions).map(Number).sort((a, b) => a - b);
  return [{ type: 'InstructionDeleted', data: { instructionId: command.instructionId, versions, deletedAt: now.toISOString() } }];
}

function sameContent(a: InstructionContent, b: InstructionContent): boolean {
  return a.name === b.name && a.description === b.description && a.templateType === b.templateType && a.template === b.template && a.enabled === b.enabled && JSON.stringify(a.metadata) === JSON.stringify(b.metadata);
}
