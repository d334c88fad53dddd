import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsInt, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength, ValidateNested } from 'class-validator';
import { ScheduleInput, Schedules, ScheduleSpec } from '@lib/schedules';
import { CommandContext } from '@lib/platform';
import { pageLimit } from '../http/paging';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { KEY_PATTERN } from './agents.dto';
import { OpenApi } from '../openapi/openapi.decorator';

class ScheduleMessageDto {
  @IsIn(['text'], { message: 'type must be text' }) type!: 'text';
  @IsString() @MinLength(1) @MaxLength(100_000) content!: string;
}

class UpdateScheduleDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) name?: string;
  @IsOptional() @IsString() @MaxLength(10_000) description?: string;
  @IsOptional() @IsArray() @ArrayMinSize(1) @ArrayMaxSize(20) @ValidateNested({ each: true }) @Type(() => ScheduleMessageDto) message?: ScheduleMessageDto[];
  /** Checked by the domain (interval or cron, the ISO 8601 form, the minimum), which names the field. */
  @IsOptional() @IsObject() schedule?: ScheduleSpec;
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsObject() session_metadata?: Record<string, unknown>;
  @IsOptional() @IsInt() @Min(1) @Max(50) max_executions_to_keep?: number;
  @IsOptional() @IsInt() @Min(1) @Max(604_800) stall_timeout_seconds?: number;
}

/** Not derived from the update's class: class-validator would inherit its `@IsOptional` on the required fields. */
class CreateScheduleDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(50) @Matches(KEY_PATTERN, { message: 'key may hold only letters, digits, underscores and hyphens' }) key?: string;
  @IsString() @MinLength(1) @MaxLength(255) name!: string;
  @IsOptional() @IsString() @MaxLength(10_000) description?: string;
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(20) @ValidateNested({ each: true }) @Type(() => ScheduleMessageDto) message!: ScheduleMessageDto[];
  @IsObject() schedule!: ScheduleSpec;
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsObject() session_metadata?: Record<string, unknown>;
  @IsOptional() @IsInt() @Min(1) @Max(50) max_executions_to_keep?: number;
  @IsOptional() @IsInt() @Min(1) @Max(604_800) stall_timeout_seconds?: number;
}

/** An agent's schedules (`/v2/agents/{agent_key}/schedules`, docs/schedules.md) and their executions. */
@Controller('v2/agents/:agent_key/schedules')
export class SchedulesController {
  constructor(private readonly schedules: Schedules) {}

  @OpenApi({ body: CreateScheduleDto, statuses: [409] })
  @Post()
  @Policy('agent.develop')
  async create(@Param('agent_key') agentKey: string, @Body() body: unknown, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const created = await this.schedules.create(agentKey, { ...validateBody(CreateScheduleDto, body) } as ScheduleInput, ctx);
    res.status(201);
    return created;
  }

  @Get()
  @Policy('agent.view')
  async list(@Param('agent_key') agentKey: string, @Query('limit') limit?: string, @Query('page_key') pageKey?: string) {
    return this.schedules.list(agentKey, pageLimit(limit, 10, 100), pageKey);
  }

  @Get(':schedule_key')
  @Policy('agent.view')
  async get(@Param('agent_key') agentKey: string, @Param('schedule_key') key: string) {
    return this.schedules.get(agentKey, key);
  }

  @OpenApi({ body: UpdateScheduleDto })
  @Patch(':schedule_key')
  @Policy('agent.develop')
  async update(@Param('agent_key') agentKey: string, @Param('schedule_key') key: string, @Body() body: unknown, @Ctx() ctx: CommandContext) {
    return this.schedules.update(agentKey, key, { ...validateBody(UpdateScheduleDto, body) } as ScheduleInput, ctx);
  }

  @Delete(':schedule_key')
  @HttpCode(204)
  @Policy('agent.develop')
  async remove(@Param('agent_key') agentKey: string, @Param('schedule_key') key: string, @Ctx() ctx: CommandContext) {
    await this.schedules.remove(agentKey, key, ctx);
  }

  @Get(':schedule_key/executions')
  @Policy('agent.view')
  async executions(@Param('agent_key') agentKey: string, @Param('schedule_key') key: string, @Query('limit') limit?: string, @Query('page_key') pageKey?: string) {
    return this.schedules.executions(agentKey, key, pageLimit(limit, 10, 100), pageKey);
  }
}
