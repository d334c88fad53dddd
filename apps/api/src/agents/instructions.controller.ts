import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { Response } from 'express';
import { CreateInstruction, DeleteInstruction, DeleteInstructionVersion, GetInstruction, InstructionWritten, ListInstructions, TestInstruction, UpdateInstruction } from '@lib/agents';
import { Principal } from '@lib/auth';
import { CommandContext, invalid, listFilter } from '@lib/platform';
import { pageLimit } from '../http/paging';
import { Caller } from '../http/caller';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { statusFor } from '../http/write-status';
import { CreateInstructionDto, TestInstructionDto, UpdateInstructionDto } from './instructions.dto';
import { OpenApi } from '../openapi/openapi.decorator';

/** A version number from the path or the query: an integer from 1. */
function versionOf(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw invalid('request.invalid', 'version must be an integer from 1', { version: 'must be an integer from 1' });
  return n;
}

/** `/v2/instructions`: versioned instructions that agents' steps refer to. */
@Controller('v2/instructions')
export class InstructionsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @OpenApi({ body: CreateInstructionDto, statuses: [202, 409] })
  @Post()
  @Policy('instruction.manage')
  async create(@Body() body: unknown, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const dto = validateBody(CreateInstructionDto, body);
    const content = { name: dto.name, description: dto.description ?? '', templateType: dto.template_type ?? 'velocity', template: dto.template, metadata: dto.metadata ?? {}, enabled: dto.enabled ?? true };
    return this.answer(await this.commands.execute(new CreateInstruction(content, ctx)), 201, res);
  }

  @Get()
  @Policy('instruction.read')
  async list(@Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('filter') filter?: string, @Query('enabled') enabled?: string, @Query('type') type?: string) {
    const regex = listFilter(filter);
    if (enabled !== undefined && enabled !== 'true' && enabled !== 'false') throw invalid('request.invalid', 'enabled must be true or false', { enabled: 'must be true or false' });
    // Every instruction is `initial`, the only type the reference has.
    if (type !== undefined && type !== 'initial') throw invalid('request.invalid', 'type must be initial', { type: 'must be initial' });
    return this.queries.execute(new ListInstructions(pageLimit(limit, 10, 100), pageKey, regex, enabled === undefined ? undefined : enabled === 'true'));
  }

  @Get(':instruction_id')
  @Policy('instruction.read')
  async get(@Param('instruction_id') id: string, @Query('version') version?: string) {
    return this.queries.execute(new GetInstruction(id, versionOf(version)));
  }

  @OpenApi({ body: UpdateInstructionDto, statuses: [202] })
  @Patch(':instruction_id')
  @Policy('instruction.manage')
  async update(@Param('instruction_id') id: string, @Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const dto = validateBody(UpdateInstructionDto, body);
    const change = { name: dto.name, description: dto.description, templateType: dto.template_type, template: dto.template, metadata: dto.metadata, enabled: dto.enabled };
    return this.answer(await this.commands.execute(new UpdateInstruction(id, change, caller, ctx)), 200, res);
  }

  @OpenApi({ statuses: [202, 409] })
  @Delete(':instruction_id')
  @Policy('instruction.manage')
  @HttpCode(204)
  async remove(@Param('instruction_id') id: string, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    statusFor(await this.commands.execute(new DeleteInstruction(id, caller, ctx)), 204, res);
  }

  /** A POST that changes nothing; the reference gives it the roles that manage instructions. */
  @OpenApi({ body: TestInstructionDto })
  @Post(':instruction_id/test')
  @Policy('instruction.manage')
  @HttpCode(200)
  async test(@Param('instruction_id') id: string, @Body() body: unknown, @Query('version') version?: string) {
    const dto = validateBody(TestInstructionDto, body);
    return this.queries.execute(new TestInstruction(id, versionOf(version), dto.context ?? {}, dto.tools ?? []));
  }

  @OpenApi({ statuses: [202, 409] })
  @Delete(':instruction_id/versions/:version')
  @Policy('instruction.manage')
  @HttpCode(204)
  async removeVersion(@Param('instruction_id') id: string, @Param('version') version: string, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    statusFor(await this.commands.execute(new DeleteInstructionVersion(id, versionOf(version) ?? 0, caller, ctx)), 204, res);
  }

  private async answer(result: InstructionWritten, ok: number, res: Response) {
    statusFor(result, ok, res);
    if (!result.visible) return { id: result.value.id, version: result.value.version };
    return this.queries.execute(new GetInstruction(result.value.id, result.value.version));
  }
}
