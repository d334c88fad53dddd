import { Body, Controller, Get, Param, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsDefined, IsIn, IsObject, IsOptional, IsString, Matches, MaxLength, MinLength, ValidateNested } from 'class-validator';
import { AGENT_BUNDLE_FORMAT, AGENT_BUNDLE_VERSION, AgentExporter, AgentImporter, bundleProblems } from '@lib/agents';
import { Principal } from '@lib/auth';
import { CommandContext, invalid } from '@lib/platform';
import { BodyLimit } from '../http/body-limit';
import { Caller } from '../http/caller';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { OpenApi } from '../openapi/openapi.decorator';
import { CreateAgentDto, KEY_PATTERN } from './agents.dto';

/** The agent of a bundle: its key and its configuration, whose fields are checked as its create route checks them. */
class BundledAgentDto {
  @IsString() @MinLength(1) @MaxLength(50) @Matches(KEY_PATTERN, { message: 'key may hold only letters, digits, underscores and hyphens' }) key!: string;
  @IsDefined() @ValidateNested() @Type(() => CreateAgentDto) config!: CreateAgentDto;
}

/** An agent bundle, version 1 (docs/agent-bundles.md); each object of the arrays is checked as its create route does. */
/**
 * The most objects of one kind a bundle holds (an agent names far fewer): a longer list is refused before any of its
 * items is checked, so one request cannot hold the process checking 100,000 of them.
 */
const MAX_BUNDLED = 1000;

class AgentBundleDto {
  @IsIn([AGENT_BUNDLE_FORMAT]) format!: string;
  @IsIn([AGENT_BUNDLE_VERSION]) version!: number;
  @IsOptional() @IsString() exported_at?: string;
  @IsDefined() @ValidateNested() @Type(() => BundledAgentDto) agent!: BundledAgentDto;
  @IsOptional() @IsArray() @ArrayMaxSize(MAX_BUNDLED) instructions?: Record<string, unknown>[];
  @IsOptional() @IsArray() @ArrayMaxSize(MAX_BUNDLED) tool_configurations?: Record<string, unknown>[];
  @IsOptional() @IsArray() @ArrayMaxSize(MAX_BUNDLED) tools?: Record<string, unknown>[];
  @IsOptional() @IsArray() @ArrayMaxSize(MAX_BUNDLED) tool_servers?: Record<string, unknown>[];
  @IsOptional() @IsArray() @ArrayMaxSize(MAX_BUNDLED) glossaries?: Record<string, unknown>[];
  @IsOptional() @IsObject() secrets?: Record<string, unknown>;
}

class ImportAgentDto {
  /** The bundle `GET /v2/agents/{agent_key}/export` gave. */
  @IsDefined() @ValidateNested() @Type(() => AgentBundleDto) bundle!: AgentBundleDto;
  /** Imports the agent under this key instead of the bundle's. */
  @IsOptional() @IsString() @MinLength(1) @MaxLength(50) @Matches(KEY_PATTERN, { message: 'key may hold only letters, digits, underscores and hyphens' }) key?: string;
  @IsOptional() @IsBoolean() dry_run?: boolean;
}

/**
 * The format and version first, so that a bundle of another version is told so rather than about its fields; then
 * the body's fields; then each object's own checks (`bundle.<part>[i].<field>`).
 */
function checkImport(body: unknown): ImportAgentDto {
  const bundle = body !== null && typeof body === 'object' ? (body as { bundle?: unknown }).bundle : undefined;
  const version = bundleProblems(bundle);
  if (version['bundle.format'] || version['bundle.version']) throw invalid('agent_bundle.invalid', `Invalid ${Object.keys(version)[0]}: ${Object.values(version)[0]}`, version);
  const dto = validateBody(ImportAgentDto, body);
  const problems = bundleProblems(bundle);
  const first = Object.entries(problems)[0];
  if (first) throw invalid('agent_bundle.invalid', `Invalid ${first[0]}: ${first[1]}`, problems);
  return dto;
}

/** An agent and what its configuration names as one versioned JSON bundle, and back (docs/agent-bundles.md). */
@Controller('v2/agents')
export class AgentBundlesController {
  constructor(
    private readonly exporter: AgentExporter,
    private readonly importer: AgentImporter,
  ) {}

  /** A developer's right: the bundle holds instruction texts and lambda code, and copies the agent out whole. */
  @Get(':agent_key/export')
  @Policy('agent.develop')
  async export(@Param('agent_key') key: string, @Ctx() ctx: CommandContext) {
    return this.exporter.export(key, ctx);
  }

  /** 201 with what was created; `dry_run`: 200 with what would be, creating nothing; 409 listing conflicts. */
  @OpenApi({ body: ImportAgentDto, statuses: [200, 409] })
  @Post('import')
  @Policy('agent.create')
  @BodyLimit(50) // skills (5 MB), lambdas' code and glossaries (100,000 terms) travel whole
  async import(@Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const dto = checkImport(body);
    // The bundle as sent (the DTO's instances are for the checks): stored configurations are plain JSON.
    const answer = await this.importer.import((body as { bundle: unknown }).bundle, dto.key, dto.dry_run ?? false, caller, ctx);
    res.status(answer.dry_run ? 200 : 201);
    return answer;
  }
}
