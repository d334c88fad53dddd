import { Condition, findMatching, ReadStore } from '@lib/platform';
import type { AgentConfig } from '../domain/agent-config';
import type { InstructionUsage } from '../domain/instruction';
import { AGENTS, AgentRow, INSTRUCTIONS, InstructionRow, instructionRowId } from '../read-models';
import type { ReferenceCheck } from './agent-writer';

/** The row of one version of an instruction, or of its latest version when no version is given. */
export async function instructionVersionRow(reads: ReadStore, instructionId: string, version?: number): Promise<InstructionRow | undefined> {
  if (version !== undefined) return reads.get<InstructionRow>(INSTRUCTIONS, instructionRowId(instructionId, version));
  const where: Condition[] = [
    { field: 'instruction_id', op: 'eq', value: instructionId },
    { field: 'latest', op: 'eq', value: true },
  ];
  return (await reads.find<InstructionRow>(INSTRUCTIONS, { where, limit: 1 })).items[0];
}

/** Every instruction a step refers to exists, and every pinned version of it: else a 400 on the reference's field. */
export const instructionReferenceCheck =
  (reads: ReadStore): ReferenceCheck =>
  async (config: AgentConfig) => {
    const problems: Record<string, string> = {};
    for (const [step, { instructions }] of Object.entries(config.steps)) {
      for (const [i, ref] of instructions.entries()) {
        if (ref.type !== 'reference') continue;
        const field = `steps.${step}.instructions[${i}]`;
        if (!(await instructionVersionRow(reads, ref.id))) problems[`${field}.id`] = `no instruction "${ref.id}" exists (GET /v2/instructions lists them)`;
        else if (ref.version !== undefined && !(await instructionVersionRow(reads, ref.id, ref.version))) problems[`${field}.version`] = `no version ${ref.version} of instruction "${ref.id}" exists`;
      }
    }
    return problems;
  };

/** How one agent refers to an instruction: the versions it pins, and whether it follows the latest. */
export interface AgentInstructionReference {
  readonly agent: string;
  readonly pinned: readonly number[];
  readonly followsLatest: boolean;
}

/**
 * The agents that refer to an instruction, from the agents read model. Agents are few and their rows list the
 * ids they use, so a scan is cheap; a condition on the array field would not read the same on every store.
 * A read model lags its writes: an agent written at the same moment as a delete can slip past (the turn then
 * finds no instruction and says so).
 */
export async function agentsReferring(reads: ReadStore, instructionId: string): Promise<AgentInstructionReference[]> {
  const found: AgentInstructionReference[] = [];
  let pageKey: string | undefined;
  do {
    const page = await findMatching<AgentRow>(reads, AGENTS, { limit: 100, pageKey }, (row) => row.instruction_ids.includes(instructionId));
    for (const row of page.items) {
      const refs = Object.values(row.config.steps)
        .flatMap((s) => s.instructions)
        .flatMap((r) => (r.type === 'reference' && r.id === instructionId ? [r] : []));
      found.push({ agent: row.id, pinned: refs.flatMap((r) => (r.version === undefined ? [] : [r.version])), followsLatest: refs.some((r) => r.version === undefined) });
    }
    pageKey = page.nextPageKey;
  } while (pageKey);
  return found;
}

/** What keeps one version: the agents pinning it, and those following the latest. */
export const versionUsage = (refs: readonly AgentInstructionReference[], version: number): InstructionUsage => ({
  pinnedBy: refs.filter((r) => r.pinned.includes(version)).map((r) => r.agent),
  latestUsedBy: refs.filter((r) => r.followsLatest).map((r) => r.agent),
});
