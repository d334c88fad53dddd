import { Body, Controller, Delete, HttpCode, Param, Patch, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength, ValidateNested } from 'class-validator';
import { LambdaToolInput, resolveDynamicTools, ToolConfig, ToolServers, UserTools } from '@lib/tools';
import { Principal } from '@lib/auth';
import { CommandContext, invalid } from '@lib/platform';
import { Caller } from '../http/caller';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { OpenApi } from '../openapi/openapi.decorator';

class ExecutionConfigurationDto {
  @IsOptional() @IsInt() @Min(1) @Max(21_600) max_execution_time_seconds?: number;
  /** Deprecated in the spec and ignored: the sandbox's memory bound is the service's (LAMBDA_MAX_MEMORY_MB). */
  @IsOptional() @IsInt() @Min(10) @Max(1024) max_memory_mb?: number;
}

class UpdateLambdaToolDto {
  @IsIn(['lambda'], { message: 'type must be mcp, lambda or client' }) type!: 'lambda';
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) title?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(5000) description?: string;
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(100_000) code?: string;
  @IsOptional() @ValidateNested() @Type(() => ExecutionConfigurationDto) execution_configuration?: ExecutionConfigurationDto;
  @IsOptional() @IsObject() tool_configurations?: Record<string, ToolConfig> | null;
}

/** Not derived from the update's class: class-validator would inherit its `@IsOptional` on the required fields. */
class CreateLambdaToolDto {
  @IsIn(['lambda'], { message: 'type must be lambda or client' }) type!: 'lambda';
  @IsString() @MinLength(1) @MaxLength(50) @Matches(/^[a-zA-Z0-9_-]+$/, { message: 'name may hold only letters, digits, underscores and hyphens' }) name!: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(128) title?: string;
  @IsString() @MinLength(1) @MaxLength(5000) description!: string;
  @IsString() @MinLength(1) @MaxLength(100_000) code!: string;
  @IsOptional() @IsIn(['python'], { message: 'language must be python (Python 3.12)' }) language?: 'python';
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @ValidateNested() @Type(() => ExecutionConfigurationDto) execution_configuration?: ExecutionConfigurationDto;
  @IsOptional() @IsObject() tool_configurations?: Record<string, ToolConfig> | null;
}

class UpdateClientToolDto {
  @IsIn(['client'], { message: 'type must be mcp, lambda or client' }) type!: 'client';
  @IsOptional() @IsString() @MinLength(1) @MaxLength(128) title?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(5000) description?: string;
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsObject() input_schema?: Record<string, unknown>;
  /** `{}` clears it: any output is then accepted. */
  @IsOptional() @IsObject() output_schema?: Record<string, unknown>;
}

/** The reference's UpdateMcpToolRequest: a tool a server's sync listed can only be enabled or disabled. */
class UpdateMcpToolDto {
  @IsIn(['mcp']) type!: 'mcp';
  @IsOptional() @IsBoolean() enabled?: boolean;
}

class CreateClientToolDto {
  @IsIn(['client'], { message: 'type must be lambda or client' }) type!: 'client';
  @IsString() @MinLength(1) @MaxLength(50) @Matches(/^[a-zA-Z0-9_-]+$/, { message: 'name may hold only letters, digits, underscores and hyphens' }) name!: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(128) title?: string;
  @IsString() @MinLength(1) @MaxLength(5000) description!: string;
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsObject() input_schema?: Record<string, unknown>;
  @IsOptional() @IsObject() output_schema?: Record<string, unknown>;
}

class TestContextDto {
  @IsOptional() @IsObject() agent?: { metadata?: Record<string, unknown>; secrets?: Record<string, string> };
  @IsOptional() @IsObject() session?: { metadata?: Record<string, unknown> };
}

class TestToolDto {
  @IsObject() input!: Record<string, unknown>;
  @IsOptional() @IsInt() @Min(1) @Max(300) timeout_seconds?: number;
  @IsOptional() @ValidateNested() @Type(() => TestContextDto) test_context?: TestContextDto;
}

class TestCodeDto {
  @IsOptional() @IsIn(['python'], { message: 'language must be python (Python 3.12)' }) language?: 'python';
  @IsString() @MinLength(1) @MaxLength(100_000) code!: string;
  @IsObject() test_input!: Record<string, unknown>;
  @IsOptional() @IsInt() @Min(1) @Max(300) timeout_seconds?: number;
  @IsOptional() @ValidateNested() @Type(() => ExecutionConfigurationDto) execution_configuration?: ExecutionConfigurationDto;
  @IsOptional() @IsObject() tool_configurations?: Record<string, ToolConfig>;
  @IsOptional() @ValidateNested() @Type(() => TestContextDto) test_context?: TestContextDto;
}

function checkContext(context: TestContextDto | undefined): void {
  for (const [k, v] of Object.entries(context?.agent?.secrets ?? {})) if (typeof v !== 'string') throw invalid('request.invalid', `Invalid test_context.agent.secrets.${k}: must be a string`, { [`test_context.agent.secrets.${k}`]: 'must be a string' });
}

const typeOf = (body: unknown): unknown => (body !== null && typeof body === 'object' ? (body as { type?: unknown }).type : undefined);
const isClient = (body: unknown): boolean => typeOf(body) === 'client';

function input(dto: (UpdateLambdaToolDto | CreateLambdaToolDto) & { name?: string }): LambdaToolInput {
  const { type: _type, language: _language, ...rest } = dto as UpdateLambdaToolDto & { language?: string };
  return (rest.tool_configurations ? { ...rest, tool_configurations: resolveDynamicTools(rest.tool_configurations) } : rest) as LambdaToolInput;
}

/**
 * User-defined tools at `/v2/tools` (Python lambdas, docs/lambda-tools.md, and client tools): create, update,
 * delete, and test lambdas with or without creating them. Listing and getting are in ToolServersController (one list of every tool).
 */
@Controller('v2/tools')
export class ToolsController {
  constructor(
    private readonly tools: UserTools,
    private readonly servers: ToolServers,
  ) {}

  @OpenApi({ body: [CreateClientToolDto, CreateLambdaToolDto] })
  @Post()
  @Policy('tool_config.manage')
  async create(@Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const created = await this.tools.create(isClient(body) ? ({ ...validateBody(CreateClientToolDto, body) } as LambdaToolInput) : input(validateBody(CreateLambdaToolDto, body)), caller, ctx);
    res.status(201);
    return created;
  }

  @OpenApi({ body: TestCodeDto })
  @Post('test')
  @HttpCode(200)
  @Policy('tool_config.manage')
  async testCode(@Body() body: unknown, @Ctx() ctx: CommandContext) {
    const dto = validateBody(TestCodeDto, body);
    checkContext(dto.test_context);
    return this.tools.testCode(dto.tool_configurations ? { ...dto, tool_configurations: resolveDynamicTools(dto.tool_configurations) } : dto, ctx);
  }

  @OpenApi({ body: [UpdateClientToolDto, UpdateLambdaToolDto, UpdateMcpToolDto] })
  @Patch(':tool_id')
  @Policy('tool_config.manage')
  async update(@Param('tool_id') id: string, @Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext) {
    if (typeOf(body) === 'mcp') return this.servers.updateTool(id, validateBody(UpdateMcpToolDto, body).enabled, caller, ctx);
    return this.tools.update(id, isClient(body) ? ({ ...validateBody(UpdateClientToolDto, body) } as LambdaToolInput) : { ...input(validateBody(UpdateLambdaToolDto, body)), type: 'lambda' }, caller, ctx);
  }

  @OpenApi({ statuses: [409] })
  @Delete(':tool_id')
  @HttpCode(204)
  @Policy('tool_config.manage')
  async remove(@Param('tool_id') id: string, @Caller() caller: Principal, @Ctx() ctx: CommandContext) {
    await this.tools.remove(id, caller, ctx);
  }

  @OpenApi({ body: TestToolDto })
  @Post(':tool_id/test')
  @HttpCode(200)
  @Policy('tool_config.manage')
  async test(@Param('tool_id') id: string, @Body() body: unknown, @Ctx() ctx: CommandContext) {
    const dto = validateBody(TestToolDto, body);
    checkContext(dto.test_context);
    return this.tools.test(id, dto.input, dto.timeout_seconds, dto.test_context, ctx);
  }
}
