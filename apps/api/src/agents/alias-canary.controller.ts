import { Body, Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsInt, IsNumber, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';
import { CanaryInput, Canaries } from '@lib/aliases';
import type { Principal } from '@lib/auth';
import type { CommandContext } from '@lib/platform';
import { Caller } from '../http/caller';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { OpenApi } from '../openapi/openapi.decorator';
import { KEY_PATTERN } from './agents.dto';

class StartCanaryDto {
  @IsString() @MinLength(1) @MaxLength(50) @Matches(KEY_PATTERN, { message: 'candidate_agent_key may hold only letters, digits, underscores and hyphens' }) candidate_agent_key!: string;
  /** The policy's agent the candidate competes with; required when the policy routes to several. */
  @IsOptional() @IsString() @MinLength(1) @MaxLength(50) control_agent_key?: string;
  @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0) @Max(1) weight!: number;
  /** docs/agents.md, "Scorers"; each checked by the scoring port, which names `scorers[i].…`. */
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(10) scorers!: Record<string, unknown>[];
  @IsInt() @Min(1) @Max(100_000) promote_after_sessions!: number;
  @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0) @Max(1) max_score_drop!: number;
}

/**
 * Canary aliases (docs/aliases.md, "Canary"): a candidate agent takes a share of an alias's new sessions, both arms
 * are scored online, and the evidence promotes or rolls it back. Starting or stopping one changes what the policy
 * routes to, so it needs what replacing the policy needs (`alias.administer`, and `agent.administer` on the agents
 * the alias routes to and on the candidate); reading it, what reading the alias needs.
 */
@Controller('v2/agent_aliases')
export class AliasCanaryController {
  constructor(private readonly canaries: Canaries) {}

  @OpenApi({ body: StartCanaryDto })
  @Put(':alias_key/canary')
  @Policy('alias.administer')
  async start(@Param('alias_key') key: string, @Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext) {
    return this.canaries.start(key, validateBody(StartCanaryDto, body) as CanaryInput, caller, ctx);
  }

  @Get(':alias_key/canary')
  @Policy('alias.read')
  async get(@Param('alias_key') key: string) {
    return this.canaries.get(key);
  }

  @Delete(':alias_key/canary')
  @HttpCode(204)
  @Policy('alias.administer')
  async stop(@Param('alias_key') key: string, @Caller() caller: Principal, @Ctx() ctx: CommandContext) {
    await this.canaries.stop(key, caller, ctx);
  }
}
