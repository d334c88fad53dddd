import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { Response } from 'express';
import { CreateLlm, DeleteLlm, DiscoverLlm, GetLlm, ListLlms, maskedAuth, splitAuth, UpdateLlm } from '@lib/llms';
import { CommandContext, listFilter, WriteResult } from '@lib/platform';
import { pageLimit } from '../http/paging';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { statusFor } from '../http/write-status';
import { toLlmInput } from './llm-input';
import { CreateLlmDto, DiscoverLlmDto, UpdateLlmDto } from './llms.dto';
import { OpenApi } from '../openapi/openapi.decorator';

/** The LLM registry (`/v2/llms`). `llm_id` in paths takes the id (`llm_…`) or the name. */
@Controller('v2/llms')
export class LlmsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly discoverer: DiscoverLlm,
  ) {}

  @OpenApi({ body: CreateLlmDto, statuses: [202] })
  @Post()
  @Policy('llm.manage')
  async create(@Body() body: unknown, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const dto = validateBody(CreateLlmDto, body);
    const input = toLlmInput(dto, body as Record<string, unknown>);
    const result: WriteResult<{ llmId: string }> = await this.commands.execute(new CreateLlm(dto.name, { ...input, model: dto.model, uri: dto.uri }, ctx));
    statusFor(result, 201, res);
    if (!result.visible) return { id: result.value.llmId, name: dto.name };
    return this.queries.execute(new GetLlm(result.value.llmId));
  }

  @Get()
  @Policy('llm.use')
  async list(@Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('filter') filter?: string) {
    const regex = listFilter(filter);
    return this.queries.execute(new ListLlms(pageLimit(limit, 10, 100), pageKey, regex));
  }

  /** Probes a candidate (not stored) and returns it with its capabilities and how each was found. */
  @OpenApi({ body: DiscoverLlmDto })
  @Post('discover')
  @Policy('llm.manage')
  @HttpCode(200)
  async discover(@Body() body: unknown) {
    const dto = validateBody(DiscoverLlmDto, body);
    const input = toLlmInput(dto, body as Record<string, unknown>);
    const auth = input.auth ?? null;
    const type = dto.type ?? 'openai-compatible';
    const found = await this.discoverer.discover({ type, uri: dto.uri ?? '', model: dto.model, headers: input.headers ?? {}, idleTimeoutSeconds: input.idleTimeoutSeconds ?? null, auth });
    return {
      type,
      ...(dto.name ? { name: dto.name } : {}),
      model: dto.model,
      ...(found.uri ? { uri: found.uri } : {}),
      headers: input.headers ?? {},
      ...(auth ? { auth: maskedAuth({ type: auth.type, identifiers: splitAuth(auth).identifiers }) } : {}),
      capabilities: { ...found.capabilities, ...input.capabilities },
      discovery: found.discovery,
    };
  }

  @Get(':llm_id')
  @Policy('llm.manage')
  async get(@Param('llm_id') id: string) {
    return this.queries.execute(new GetLlm(id));
  }

  @OpenApi({ body: UpdateLlmDto, statuses: [202] })
  @Patch(':llm_id')
  @Policy('llm.manage')
  async update(@Param('llm_id') id: string, @Body() body: unknown, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const dto = validateBody(UpdateLlmDto, body);
    const result: WriteResult<{ name: string }> = await this.commands.execute(new UpdateLlm(id, toLlmInput(dto, body as Record<string, unknown>), ctx));
    statusFor(result, 200, res);
    if (!result.visible) return { name: result.value.name };
    return this.queries.execute(new GetLlm(result.value.name));
  }

  @OpenApi({ statuses: [202] })
  @Delete(':llm_id')
  @Policy('llm.manage')
  @HttpCode(204)
  async remove(@Param('llm_id') id: string, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    statusFor(await this.commands.execute(new DeleteLlm(id, ctx)), 204, res);
  }
}
