import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsObject, IsOptional, IsString, MaxLength, MinLength, ValidateNested } from 'class-validator';
import { ToolServerInput, ToolServers } from '@lib/tools';
import { Principal } from '@lib/auth';
import { CommandContext, invalid, listFilter } from '@lib/platform';
import { pageLimit } from '../http/paging';
import { Caller } from '../http/caller';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { OpenApi } from '../openapi/openapi.decorator';

class ToolServerAuthDto {
  @IsIn(['bearer', 'header']) type!: 'bearer' | 'header';
  @IsOptional() @IsString() @MinLength(1) @MaxLength(8192) token?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) header?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(8192) value?: string;
}

class UpdateToolServerDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) name?: string;
  @IsOptional() @IsString() @MaxLength(10000) description?: string;
  @IsOptional() @IsString() @MaxLength(2048) uri?: string;
  @IsOptional() @IsObject() headers?: Record<string, string>;
  @IsOptional() @IsIn(['sse', 'streamable-http']) transport?: 'sse' | 'streamable-http';
  @IsOptional() @ValidateNested() @Type(() => ToolServerAuthDto) auth?: ToolServerAuthDto | null;
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
}

class CreateToolServerDto extends UpdateToolServerDto {
  @IsString() @MinLength(1) @MaxLength(255) declare name: string;
  @IsIn(['mcp']) type!: 'mcp';
  @IsString() @MaxLength(2048) declare uri: string;
}

function input(dto: UpdateToolServerDto): ToolServerInput {
  const auth = dto.auth;
  if (auth && auth.type === 'bearer' && !auth.token) throw invalid('request.invalid', 'Invalid auth.token: required for bearer auth', { 'auth.token': 'required' });
  if (auth && auth.type === 'header' && (!auth.header || !auth.value)) throw invalid('request.invalid', 'Invalid auth: header auth needs header and value', { 'auth.header': 'required', 'auth.value': 'required' });
  for (const [k, v] of Object.entries(dto.headers ?? {})) if (typeof v !== 'string') throw invalid('request.invalid', `Invalid headers.${k}: must be a string`, { [`headers.${k}`]: 'must be a string' });
  const { auth: _a, ...rest } = dto;
  return { ...rest, ...(auth === null ? { auth: null } : auth ? { auth: auth.type === 'bearer' ? { type: 'bearer', token: auth.token! } : { type: 'header', header: auth.header!, value: auth.value! } } : {}) } as ToolServerInput;
}

/** MCP tool servers (`/v2/tool_servers`) and the tools their syncs list (`/v2/tools`); auth secrets are `****`. */
@Controller('v2')
export class ToolServersController {
  constructor(private readonly servers: ToolServers) {}

  @OpenApi({ body: CreateToolServerDto })
  @Post('tool_servers')
  @Policy('tool_config.manage')
  async create(@Body() body: unknown, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const created = await this.servers.create(input(validateBody(CreateToolServerDto, body)), ctx);
    res.status(201);
    return created;
  }

  @Get('tool_servers')
  @Policy('tool_config.read')
  async list(@Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('filter') filter?: string, @Query('enabled') enabled?: string) {
    if (enabled !== undefined && enabled !== 'true' && enabled !== 'false') throw invalid('request.invalid', 'enabled must be true or false', { enabled: 'must be true or false' });
    return this.servers.list(pageLimit(limit, 10, 100), pageKey, listFilter(filter), enabled === undefined ? undefined : enabled === 'true');
  }

  @Get('tool_servers/:tool_server_id')
  @Policy('tool_config.read')
  async get(@Param('tool_server_id') id: string) {
    return this.servers.get(id);
  }

  @OpenApi({ body: UpdateToolServerDto })
  @Patch('tool_servers/:tool_server_id')
  @Policy('tool_config.manage')
  async update(@Param('tool_server_id') id: string, @Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext) {
    return this.servers.update(id, input(validateBody(UpdateToolServerDto, body)), caller, ctx);
  }

  @OpenApi({ statuses: [409] })
  @Delete('tool_servers/:tool_server_id')
  @Policy('tool_config.manage')
  @HttpCode(204)
  async remove(@Param('tool_server_id') id: string, @Caller() caller: Principal, @Ctx() ctx: CommandContext) {
    await this.servers.remove(id, caller, ctx);
  }

  @OpenApi({ statuses: [502] })
  @Post('tool_servers/:tool_server_id/sync')
  @Policy('tool_config.manage')
  @HttpCode(204)
  async sync(@Param('tool_server_id') id: string, @Caller() caller: Principal, @Ctx() ctx: CommandContext) {
    await this.servers.sync(id, caller, ctx);
  }

  @Get('tools')
  @Policy('tool_config.read')
  async tools(@Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('type') type?: string, @Query('filter') filter?: string, @Query('tool_server_id') toolServerId?: unknown, @Query('enabled') enabled?: unknown) {
    if (toolServerId !== undefined && (typeof toolServerId !== 'string' || !/^tsr_[0-9a-zA-Z_-]+$/.test(toolServerId))) throw invalid('request.invalid', 'Invalid tool_server_id: must be a tool server id (tsr_…)', { tool_server_id: 'must be a tool server id (tsr_…)' });
    if (enabled !== undefined && enabled !== 'true' && enabled !== 'false') throw invalid('request.invalid', 'Invalid enabled: must be true or false', { enabled: 'must be true or false' });
    return this.servers.tools(pageLimit(limit, 10, 100), pageKey, type, listFilter(filter), { toolServerId, enabled: enabled === undefined ? undefined : enabled === 'true' });
  }

  @Get('tools/:tool_id')
  @Policy('tool_config.read')
  async tool(@Param('tool_id') id: string) {
    return this.servers.tool(id);
  }
}
