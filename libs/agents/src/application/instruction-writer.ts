import { Injectable } from '@nestjs/common';
import { CommandContext, StreamWriter, streamId } from '@lib/platform';
import { VelocityText } from '@lib/retrieval';
import { InstructionContent, InstructionEvent, instructionFold, InstructionState } from '../domain/instruction';

export const instructionStream = (id: string): string => streamId('instruction', id);

/** The instructions' write path: one stream per instruction, its versions the events on it. */
@Injectable()
export class InstructionWriter {
  constructor(private readonly streams: StreamWriter) {}

  write(id: string, decide: (state: InstructionState) => readonly InstructionEvent[], ctx: CommandContext) {
    return this.streams.write(instructionStream(id), instructionFold, decide, ctx, ['instructions']);
  }

  state(id: string): Promise<InstructionState> {
    return this.streams.state(instructionStream(id), instructionFold);
  }
}

/** A velocity template must compile before it is stored (a 400 on `template`), so a stored one always renders or hits a budget. */
export function checkTemplate(content: Pick<InstructionContent, 'templateType' | 'template'>): void {
  if (content.templateType === 'velocity') VelocityText.compile(content.template, 'template');
}
