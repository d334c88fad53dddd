import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { IsBoolean, IsObject, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { resolveDynamicTool, ToolConfigurations } from '@lib/tools';
import { Principal } from '@lib/auth';
import { CommandContext, invalid, listFilter } from '@lib/platform';
import { pageLimit } from '../http/paging';
import { Caller } from '../http/caller';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { checkDto, validationError } from '../http/validation';
import { KEY_PATTERN } from './agents.dto';
import { OpenApi } from '../openapi/openapi.decorator';

/** The identity fields; a tool's own fields are checked by the domain (they differ by type). */
class ToolConfigurationDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(50) @Matches(KEY_PATTERN, { message: 'key may hold only letters, digits, underscores and hyphens' }) key?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(50) name?: string;
  @IsOptional() @IsString() @MaxLength(10000) description?: string | null;
  @IsOptional() @IsBoolean() enabled?: boolean | null;
  @IsOptional() @IsObject() metadata?: Record<string, unknown> | null;
  @IsOptional() @IsBoolean() enrichment_only?: boolean | null;
  @IsOptional() @IsString() type?: string;
}

function check(body: unknown, creating: boolean): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalid('request.invalid', 'The request body must be a JSON object', { body: 'must be a JSON object' });
  const errors = checkDto(ToolConfigurationDto, body as Record<string, unknown>).errors;
  if (creating && typeof (body as { name?: unknown }).name !== 'string') errors.name = 'required';
  if (creating && typeof (body as { type?: unknown }).type !== 'string') errors.type = 'required';
  if (Object.keys(errors).length) throw validationError(errors);
  // The reference's `dynamic_vectara` naming a built-in is stored as that built-in (its rights and checks are its own).
  return resolveDynamicTool(body as Record<string, unknown>);
}

/** `/v2/tool_configurations`: reusable tool configurations that agents attach by a `reference` entry. */
@Controller('v2/tool_configurations')
export class ToolConfigurationsController {
  constructor(private readonly configs: ToolConfigurations) {}

  @OpenApi({ body: ToolConfigurationDto })
  @Post()
  @Policy('tool_config.manage')
  async create(@Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const created = await this.configs.create(check(body, true), caller, ctx);
    res.status(201);
    return created;
  }

  @Get()
  @Policy('tool_config.read')
  async list(@Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('type') type?: string, @Query('filter') filter?: string) {
    const regex = listFilter(filter);
    return this.configs.list(pageLimit(limit, 10, 100), pageKey, type, regex);
  }

  @Get(':tool_configuration_key')
  @Policy('tool_config.read')
  async get(@Param('tool_configuration_key') key: string) {
    return this.configs.get(key);
  }

  @OpenApi({ body: ToolConfigurationDto })
  @Patch(':tool_configuration_key')
  @Policy('tool_config.manage')
  async update(@Param('tool_configuration_key') key: string, @Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext) {
    return this.configs.update(key, check(body, false), caller, ctx);
  }

  @Delete(':tool_configuration_key')
  @Policy('tool_config.manage')
  @HttpCode(204)
  async remove(@Param('tool_configuration_key') key: string, @Caller() caller: Principal, @Ctx() ctx: CommandContext) {
    await this.configs.remove(key, caller, ctx);
  }
}
