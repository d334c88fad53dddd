import type { CommandContext } from '@lib/platform';
import type { DocumentTable } from '../../domain/document';

/** At most this many tables of one upload are summarised by a model (each is one model call). */
export const MAX_SUMMARISED_TABLES = 50;

/** The reference's `TableGenerationSpec`, as the upload takes it. */
export interface TableGenerationSpec {
  /** A registered model; absent: the generation default (`GENERATION_LLM`, or the only registered model). */
  readonly llmName?: string;
  readonly promptTemplate?: string;
  readonly sampling: Readonly<Record<string, number>>;
}

/**
 * Asks for one summary per table, in order (answered by the retrieval context, which holds the prompt engine and
 * the model path: corpora names the question, not who answers it).
 */
export class SummarizeTables {
  constructor(
    readonly tables: readonly DocumentTable[],
    readonly spec: TableGenerationSpec,
    readonly ctx: CommandContext,
  ) {}
}
