import { Body, Controller, Get, Param, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { IsBoolean, IsObject, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { AgentExporter, AgentImporter, bundleProblems } from '@lib/agents';
import { Principal } from '@lib/auth';
import { CommandContext, invalid } from '@lib/platform';
import { Caller } from '../http/caller';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { OpenApi } from '../openapi/openapi.decorator';
import { CreateAgentDto, KEY_PATTERN } from './agents.dto';

class ImportAgentDto {
  /** The bundle `GET /v2/agents/{agent_key}/export` gave (checked part by part: docs/agent-bundles.md). */
  @IsObject() bundle!: Record<string, unknown>;
  /** Imports the agent under this key instead of the bundle's. */
  @IsOptional() @IsString() @MinLength(1) @MaxLength(50) @Matches(KEY_PATTERN, { message: 'key may hold only letters, digits, underscores and hyphens' }) key?: string;
  @IsOptional() @IsBoolean() dry_run?: boolean;
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
  async import(@Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const dto = validateBody(ImportAgentDto, body);
    const problems = bundleProblems(dto.bundle);
    const first = Object.entries(problems)[0];
    if (first) throw invalid('agent_bundle.invalid', `Invalid ${first[0]}: ${first[1]}`, problems);
    // The agent's fields as its create route checks them (the map fields are the domain's, in the importer).
    validateBody(CreateAgentDto, (dto.bundle.agent as { config: unknown }).config, 'bundle.agent.config');
    const answer = await this.importer.import(dto.bundle, dto.key, dto.dry_run ?? false, caller, ctx);
    res.status(answer.dry_run ? 200 : 201);
    return answer;
  }
}
