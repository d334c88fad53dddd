import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { PipelineRuns } from '@lib/pipelines';
import { CommandContext, invalid, listFilter } from '@lib/platform';
import { pageLimit } from '../http/paging';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { OpenApi } from '../openapi/openapi.decorator';

class CreateDeadLetterDto {
  @IsString() @MinLength(1) @MaxLength(4096) source_record_id!: string;
  @IsOptional() @IsString() @MaxLength(10_000) error_message?: string;
}

class ProcessDeadLettersDto {
  @IsOptional() @IsArray() @ArrayMaxSize(10_000) @IsString({ each: true }) source_record_ids?: string[];
  @IsOptional() @IsString() last_run_id?: string;
  @IsOptional() @IsIn(['pipeline', 'manual']) origin?: 'pipeline' | 'manual';
}

const RUN_EVENT_TYPES = ['run_started', 'run_completed', 'record_processing', 'watermark_advanced'];

function oneOf(name: string, value: string | undefined, allowed: string[]): void {
  if (value !== undefined && !allowed.includes(value)) throw invalid('request.invalid', `${name} must be one of ${allowed.join(', ')}`, { [name]: `must be one of ${allowed.join(', ')}` });
}

/** A pipeline's runs, their events, and its dead letters (docs/pipelines.md); the worker wing runs them. */
@Controller('v2/pipelines/:pipeline_key')
export class PipelineRunsController {
  constructor(private readonly runs: PipelineRuns) {}

  @OpenApi({ statuses: [409] })
  @Post('trigger')
  @Policy('pipeline.manage')
  async trigger(@Param('pipeline_key') key: string, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const run = await this.runs.trigger(key, ctx);
    res.status(201);
    return run;
  }

  @Get('runs')
  @Policy('pipeline.read')
  async list(@Param('pipeline_key') key: string, @Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('status') status?: string, @Query('after') after?: string) {
    return this.runs.runs(key, { limit: pageLimit(limit, 10, 100), pageKey, status, after });
  }

  @Get('runs/:run_id')
  @Policy('pipeline.read')
  async get(@Param('pipeline_key') key: string, @Param('run_id') runId: string) {
    return this.runs.run(key, runId);
  }

  @OpenApi({ statuses: [409] })
  @Post('runs/:run_id/cancel')
  @HttpCode(204)
  @Policy('pipeline.manage')
  async cancel(@Param('pipeline_key') key: string, @Param('run_id') runId: string, @Ctx() ctx: CommandContext) {
    await this.runs.cancel(key, runId, ctx);
  }

  @Get('runs/:run_id/events')
  @Policy('pipeline.read')
  async events(@Param('pipeline_key') key: string, @Param('run_id') runId: string, @Query('type') type?: string | string[], @Query('source_record_id') sourceRecordId?: string, @Query('order') order?: string, @Query('limit') limit?: string, @Query('page_key') pageKey?: string) {
    const types = type === undefined ? undefined : Array.isArray(type) ? type : [type];
    for (const t of types ?? []) oneOf('type', t, RUN_EVENT_TYPES);
    oneOf('order', order, ['asc', 'desc']);
    return this.runs.events(key, runId, { limit: pageLimit(limit, 50, 200), pageKey, types, sourceRecordId, order: (order as 'asc' | 'desc' | undefined) ?? 'desc' });
  }

  @Get('dead_letters')
  @Policy('pipeline.read')
  async deadLetters(@Param('pipeline_key') key: string, @Query('status') status?: string, @Query('last_run_id') lastRunId?: string, @Query('origin') origin?: string, @Query('filter') filter?: string, @Query('limit') limit?: string, @Query('page_key') pageKey?: string) {
    oneOf('status', status, ['pending', 'retrying']);
    oneOf('origin', origin, ['pipeline', 'manual']);
    return this.runs.deadLetters(key, { limit: pageLimit(limit, 10, 100), pageKey, status, lastRunId, origin, filter: listFilter(filter) });
  }

  @OpenApi({ body: CreateDeadLetterDto })
  @Post('dead_letters')
  @Policy('pipeline.manage')
  async addDeadLetter(@Param('pipeline_key') key: string, @Body() body: unknown, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const dto = validateBody(CreateDeadLetterDto, body);
    const created = await this.runs.addDeadLetter(key, dto.source_record_id, dto.error_message ?? null, ctx);
    res.status(201);
    return created;
  }

  @OpenApi({ body: ProcessDeadLettersDto, statuses: [409] })
  @Post('dead_letters/process')
  @Policy('pipeline.manage')
  async process(@Param('pipeline_key') key: string, @Body() body: unknown, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const dto = validateBody(ProcessDeadLettersDto, body ?? {});
    const run = await this.runs.processDeadLetters(key, { sourceRecordIds: dto.source_record_ids, lastRunId: dto.last_run_id, origin: dto.origin }, ctx);
    res.status(201);
    return run;
  }

  @Get('dead_letters/:dead_letter_id')
  @Policy('pipeline.read')
  async deadLetter(@Param('pipeline_key') key: string, @Param('dead_letter_id') id: string) {
    return this.runs.deadLetter(key, id);
  }

  @Delete('dead_letters/:dead_letter_id')
  @HttpCode(204)
  @Policy('pipeline.manage')
  async removeDeadLetter(@Param('pipeline_key') key: string, @Param('dead_letter_id') id: string, @Ctx() ctx: CommandContext) {
    await this.runs.removeDeadLetter(key, id, ctx);
  }
}
