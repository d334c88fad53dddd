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
import type { Configurer, SharedConfiguration } from '@lib/tools';
import { ConfigurerRights } from '../access/configurer-rights';

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
    readonly caller: Configurer,
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(UpdateInstruction)
export class UpdateInstructionHandler implements ICommandHandler<UpdateInstruction, InstructionWritten> {
  constructor(
    private readonly writer: InstructionWriter,
    private readonly rights: ConfigurerRights,
    @Inject(READ_STORE) private readonly reads: ReadStore,
  ) {}

  async execute({ id, change, caller, ctx }: UpdateInstruction): Promise<InstructionWritten> {
    // The template is checked as the new version would hold it (a PATCH may change only the type).
    const state = await this.writer.state(id);
    if (state.status === 'active') checkTemplate(applyInstructionChange(state.versions[latestVersion(state)], change));
    // The new version is what every agent following the latest reads at its next turn: a change to each of them.
    const followers = (await agentsReferring(this.reads, id)).filter((r) => r.followsLatest).map((r) => r.agent);
    this.rights.assertDevelops(caller, instruction(id), followers);
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
    readonly caller: Configurer,
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(DeleteInstruction)
export class DeleteInstructionHandler implements ICommandHandler<DeleteInstruction, InstructionWritten> {
  constructor(
    private readonly writer: InstructionWriter,
    private readonly rights: ConfigurerRights,
    @Inject(READ_STORE) private readonly reads: ReadStore,
  ) {}

  async execute({ id, caller, ctx }: DeleteInstruction): Promise<InstructionWritten> {
    const usedBy = (await agentsReferring(this.reads, id)).map((r) => r.agent);
    this.rights.assertDevelops(caller, instruction(id), usedBy);
    const { position, visible } = await this.writer.write(id, (s) => decideDeleteInstruction(s, { instructionId: id, usedBy }, ctx.now), ctx);
    return { value: { id, version: 0 }, position, visible };
  }
}

export class DeleteInstructionVersion {
  constructor(
    readonly id: string,
    readonly version: number,
    readonly caller: Configurer,
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(DeleteInstructionVersion)
export class DeleteInstructionVersionHandler implements ICommandHandler<DeleteInstructionVersion, InstructionWritten> {
  constructor(
    private readonly writer: InstructionWriter,
    private readonly rights: ConfigurerRights,
    @Inject(READ_STORE) private readonly reads: ReadStore,
  ) {}

  async execute({ id, version, caller, ctx }: DeleteInstructionVersion): Promise<InstructionWritten> {
    const referring = await agentsReferring(this.reads, id);
    this.rights.assertDevelops(caller, instruction(id), referring.map((r) => r.agent));
    const usage = versionUsage(referring, version);
    const { position, visible } = await this.writer.write(id, (s) => decideDeleteInstructionVersion(s, { instructionId: id, version, usage }, ctx.now), ctx);
    return { value: { id, version }, position, visible };
  }
}

const instruction = (id: string): SharedConfiguration => ({ kind: 'instruction', id, label: `Instruction "${id}"` });
