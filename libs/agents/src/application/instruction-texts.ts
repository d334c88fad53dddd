import { Inject, Injectable } from '@nestjs/common';
import { READ_STORE, ReadStore } from '@lib/platform';
import type { TemplateType } from '../domain/agent-config';
import { instructionVersionRow } from './instruction-references';

/** An instruction's text as a turn renders it. */
export interface InstructionText {
  readonly template: string;
  readonly template_type: TemplateType;
  readonly name: string;
}

/**
 * The text of a step's instruction reference, for the agent turn: the pinned version, or the latest when the
 * reference names none. A disabled instruction still resolves (the reference API: agents already using it
 * keep working); undefined when the instruction or version is gone.
 */
@Injectable()
export class InstructionTexts {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  async resolve(ref: { readonly id: string; readonly version?: number }): Promise<InstructionText | undefined> {
    const row = await instructionVersionRow(this.reads, ref.id, ref.version);
    return row && { template: row.template, template_type: row.template_type, name: row.name };
  }
}
