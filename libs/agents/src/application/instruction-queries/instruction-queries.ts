import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { Clock, CLOCK, Condition, DomainError, findMatching, isDomainError, READ_STORE, ReadStore, type TextPattern } from '@lib/platform';
import { VelocityText } from '@lib/retrieval';
import { instructionNotFound, versionNotFound } from '../../domain/instruction';
import { INSTRUCTIONS, InstructionRow, instructionView } from '../../read-models';
import { instructionVersionRow } from '../instruction-references';

async function versionRow(reads: ReadStore, id: string, version?: number): Promise<InstructionRow> {
  const row = await instructionVersionRow(reads, id, version);
  if (row) return row;
  if (version !== undefined && (await instructionVersionRow(reads, id))) throw versionNotFound(id, version);
  throw instructionNotFound(id);
}

/** The latest version, or the one asked for. */
export class GetInstruction {
  constructor(
    readonly id: string,
    readonly version?: number,
  ) {}
}

@QueryHandler(GetInstruction)
export class GetInstructionHandler implements IQueryHandler<GetInstruction, Record<string, unknown>> {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  async execute(q: GetInstruction): Promise<Record<string, unknown>> {
    return instructionView(await versionRow(this.reads, q.id, q.version));
  }
}

/** The latest version of each instruction; `filter`: a regular expression over name and description. */
export class ListInstructions {
  constructor(
    readonly limit: number,
    readonly pageKey?: string,
    readonly filter?: TextPattern,
    readonly enabled?: boolean,
  ) {}
}

@QueryHandler(ListInstructions)
export class ListInstructionsHandler implements IQueryHandler<ListInstructions, Record<string, unknown>> {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  async execute(q: ListInstructions): Promise<Record<string, unknown>> {
    const where: Condition[] = [{ field: 'latest', op: 'eq', value: true }, ...(q.enabled !== undefined ? [{ field: 'enabled', op: 'eq' as const, value: q.enabled }] : [])];
    const page = await findMatching<InstructionRow>(this.reads, INSTRUCTIONS, { where, limit: q.limit, pageKey: q.pageKey }, (row) => !q.filter || q.filter.test(row.name) || q.filter.test(row.description));
    return { instructions: page.items.map(instructionView), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }
}

/**
 * Renders a version as a turn would, with `context` as `$session.metadata` and `tools` as `$tools` (name and
 * description of each); no agent is involved, so `$agent` is empty. Changes nothing.
 */
export class TestInstruction {
  constructor(
    readonly id: string,
    readonly version: number | undefined,
    readonly context: Readonly<Record<string, unknown>>,
    readonly tools: readonly Readonly<Record<string, unknown>>[],
  ) {}
}

@QueryHandler(TestInstruction)
export class TestInstructionHandler implements IQueryHandler<TestInstruction, { rendered_instruction: string }> {
  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute(q: TestInstruction): Promise<{ rendered_instruction: string }> {
    const row = await versionRow(this.reads, q.id, q.version);
    if (row.template_type === 'text') return { rendered_instruction: row.template };
    const context = {
      agent: { name: '', key: '', metadata: {} },
      session: { key: '', metadata: { ...q.context } },
      currentDate: this.clock.now().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      tools: q.tools.map((t) => ({ name: t.name ?? '', description: t.description ?? '' })),
    };
    return { rendered_instruction: compileStored(row.template).render(context) };
  }
}

/** A stored template compiled when it was written; one that no longer does (a budget lowered since) is the reference's 422. */
function compileStored(template: string): VelocityText {
  try {
    return VelocityText.compile(template, 'template');
  } catch (e) {
    if (!isDomainError(e)) throw e;
    throw new DomainError('unprocessable', 'instruction.template_invalid', e.message, e.details);
  }
}
