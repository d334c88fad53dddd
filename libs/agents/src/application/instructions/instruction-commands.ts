import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext, ID_GENERATOR, IdGenerator, READ_STORE, ReadStore, WriteResult } from '@lib/platform';
import {
  applyInstructionChange,
  decideCreateInstruction,
  decideDeleteInstruction,
  decideDeleteInstructionVersion,
  decideUpdateInstruction,
  InstructionChange,
  InstructionContent,
  InstructionEvent,
  latestVersion,
} from '../../domain/instruction';
import { agentsReferring, versionUsage } from '../instruction-references';
import { checkTemplate, InstructionWriter } from '../instruction-writer';

/** What a write answers: the instruction and the version the caller should read. */
export type InstructionWritten = WriteResult<{ id: string; version: number }>;

export class CreateInstruction {
  constructor(
    readonly content: InstructionContent,
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(CreateInstruction)
export class CreateInstructionHandler implements ICommandHandler<CreateInstruction, InstructionWritten> {
  constructor(
    private readonly writer: InstructionWriter,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  async execute({ content, ctx }: CreateInstruction): Promise<InstructionWritten> {
    checkTemplate(content);
    const id = `ins_${this.ids.uuid()}`;
    const { position, visible } = await this.writer.write(id, (s) => decideCreateInstruction(s, { instructionId: id, content }, ctx.now), ctx);
    return { value: { id, version: 1 }, position, visible };
  }
}

/** A PATCH: a new version from the latest one (versions never change). */
export class UpdateInstruction {
  constructor(
    readonly id: string,
    readonly change: InstructionChange,
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(UpdateInstruction)
export class UpdateInstructionHandler implements ICommandHandler<UpdateInstruction, InstructionWritten> {
  constructor(private readonly writer: InstructionWriter) {}

  async execute({ id, change, ctx }: UpdateInstruction): Promise<InstructionWritten> {
    // The template is checked as the new version would hold it (a PATCH may change only the type).
    const state = await this.writer.state(id);
    if (state.status === 'active') checkTemplate(applyInstructionChange(state.versions[latestVersion(state)], change));
    let version = 0;
    const { position, visible } = await this.writer.write(
      id,
      (s) => {
        const events: InstructionEvent[] = decideUpdateInstruction(s, { instructionId: id, change }, ctx.now);
        version = events[0]?.type === 'InstructionVersionCreated' ? events[0].data.version : s.status === 'active' ? latestVersion(s) : 0;
        return events;
      },
      ctx,
    );
    return { value: { id, version }, position, visible };
  }
}

export class DeleteInstruction {
  constructor(
    readonly id: string,
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(DeleteInstruction)
export class DeleteInstructionHandler implements ICommandHandler<DeleteInstruction, InstructionWritten> {
  constructor(
    private readonly writer: InstructionWriter,
    @Inject(READ_STORE) private readonly reads: ReadStore,
  ) {}

  async execute({ id, ctx }: DeleteInstruction): Promise<InstructionWritten> {
    const usedBy = (await agentsReferring(this.reads, id)).map((r) => r.agent);
    const { position, visible } = await this.writer.write(id, (s) => decideDeleteInstruction(s, { instructionId: id, usedBy }, ctx.now), ctx);
    return { value: { id, version: 0 }, position, visible };
  }
}

export class DeleteInstructionVersion {
  constructor(
    readonly id: string,
    readonly version: number,
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(DeleteInstructionVersion)
export class DeleteInstructionVersionHandler implements ICommandHandler<DeleteInstructionVersion, InstructionWritten> {
  constructor(
    private readonly writer: InstructionWriter,
    @Inject(READ_STORE) private readonly reads: ReadStore,
  ) {}

  async execute({ id, version, ctx }: DeleteInstructionVersion): Promise<InstructionWritten> {
    const usage = versionUsage(await agentsReferring(this.reads, id), version);
    const { position, visible } = await this.writer.write(id, (s) => decideDeleteInstructionVersion(s, { instructionId: id, version, usage }, ctx.now), ctx);
    return { value: { id, version }, position, visible };
  }
}
