import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { IsBoolean, IsIn, IsObject, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { PipelineInput, Pipelines } from '@lib/pipelines';
import { Principal } from '@lib/auth';
import { CommandContext, invalid, listFilter } from '@lib/platform';
import { pageLimit } from '../http/paging';
import { Caller } from '../http/caller';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { KEY_PATTERN } from '../agents/agents.dto';
import { OpenApi } from '../openapi/openapi.decorator';

/** Nested objects (source, trigger, transform, options) are checked by the domain, which names the field. */
class UpdatePipelineDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) name?: string;
  @IsOptional() @IsString() @MaxLength(10_000) description?: string | null;
  @IsOptional() @IsObject() source?: Record<string, unknown>;
  @IsOptional() @IsObject() trigger?: Record<string, unknown>;
  @IsOptional() @IsObject() transform?: Record<string, unknown>;
  @IsOptional() @IsIn(['incremental', 'full_refresh']) sync_mode?: 'incremental' | 'full_refresh';
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsObject() metadata?: Record<string, string> | null;
  @IsOptional() @IsObject() processing_options?: Record<string, unknown>;
  @IsOptional() @IsObject() source_record_metadata?: Record<string, unknown>;
}

/** The reference's CreatePipelineRequest (also the PUT body); not derived from the update (its `@IsOptional` would be inherited). */
class CreatePipelineDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(50) @Matches(KEY_PATTERN, { message: 'key may hold only letters, digits, underscores and hyphens' }) key?: string;
  @IsString() @MinLength(1) @MaxLength(255) name!: string;
  @IsOptional() @IsString() @MaxLength(10_000) description?: string;
  @IsObject() source!: Record<string, unknown>;
  @IsObject() trigger!: Record<string, unknown>;
  @IsObject() transform!: Record<string, unknown>;
  @IsOptional() @IsIn(['incremental', 'full_refresh']) sync_mode?: 'incremental' | 'full_refresh';
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsObject() metadata?: Record<string, string>;
  @IsOptional() @IsObject() processing_options?: Record<string, unknown>;
  @IsOptional() @IsObject() source_record_metadata?: Record<string, unknown>;
}

/** `metadata` is string to string (the reference); a DTO decorator cannot say that of an open object. */
function input<T extends { metadata?: Record<string, string> | null }>(dto: T): PipelineInput {
  const bad = Object.entries(dto.metadata ?? {}).find(([, v]) => typeof v !== 'string');
  if (bad) throw invalid('request.invalid', `Invalid metadata.${bad[0]}: must be a string`, { [`metadata.${bad[0]}`]: 'must be a string' });
  return { ...dto } as PipelineInput;
}

/** Pipelines (`/v2/pipelines`, docs/pipelines.md): their definitions; runs and dead letters: PipelineRunsController. */
@Controller('v2/pipelines')
export class PipelinesController {
  constructor(private readonly pipelines: Pipelines) {}

  @OpenApi({ body: CreatePipelineDto, statuses: [409] })
  @Post()
  @Policy('pipeline.manage')
  async create(@Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const created = await this.pipelines.create(input(validateBody(CreatePipelineDto, body)), ctx, caller);
    res.status(201);
    return created;
  }

  @Get()
  @Policy('pipeline.read')
  async list(@Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('source_type') sourceType?: string, @Query('status') status?: string, @Query('enabled') enabled?: string, @Query('filter') filter?: string) {
    if (enabled !== undefined && enabled !== 'true' && enabled !== 'false') throw invalid('request.invalid', 'enabled must be true or false', { enabled: 'must be true or false' });
    const regex = listFilter(filter);
    return this.pipelines.list({ limit: pageLimit(limit, 10, 100), pageKey, sourceType, status, enabled: enabled === undefined ? undefined : enabled === 'true', filter: regex });
  }

  @Get(':pipeline_key')
  @Policy('pipeline.read')
  async get(@Param('pipeline_key') key: string) {
    return this.pipelines.get(key);
  }

  @OpenApi({ body: CreatePipelineDto, statuses: [409] })
  @Put(':pipeline_key')
  @Policy('pipeline.manage')
  async replace(@Param('pipeline_key') key: string, @Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext) {
    const dto = validateBody(CreatePipelineDto, body);
    if (dto.key !== undefined && dto.key !== key) throw invalid('request.invalid', 'key cannot change: it names the pipeline', { key: 'must be the pipeline’s key or omitted' });
    return this.pipelines.update(key, input(dto), false, ctx, caller);
  }

  @OpenApi({ body: UpdatePipelineDto, statuses: [409] })
  @Patch(':pipeline_key')
  @Policy('pipeline.manage')
  async update(@Param('pipeline_key') key: string, @Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext) {
    return this.pipelines.update(key, input(validateBody(UpdatePipelineDto, body)), true, ctx, caller);
  }

  @Delete(':pipeline_key')
  @HttpCode(204)
  @Policy('pipeline.manage')
  async remove(@Param('pipeline_key') key: string, @Ctx() ctx: CommandContext) {
    await this.pipelines.remove(key, ctx);
  }
}
