import { Body, Controller, Get, Param, Patch, Put } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsArray, IsIn, IsObject, IsOptional, IsString, MaxLength, MinLength, ValidateNested } from 'class-validator';
import { AgentIdentities, AgentSecrets } from '@lib/agents';
import { AGENT_ROLES, API_ROLES, CORPUS_ROLES, Principal } from '@lib/auth';
import { CommandContext } from '@lib/platform';
import { Caller } from '../http/caller';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { OpenApi } from '../openapi/openapi.decorator';

class SecretsDto {
  @IsObject() secrets!: Record<string, string | null>;
}

class IdentityCorpusRoleDto {
  @IsString() @MinLength(1) @MaxLength(100) corpus_key!: string;
  @IsIn(CORPUS_ROLES) role!: string;
}

class IdentityAgentRoleDto {
  @IsString() @MinLength(1) @MaxLength(50) agent_key!: string;
  @IsIn(AGENT_ROLES) role!: string;
}

class IdentityDto {
  @IsOptional() @IsIn(['auto', 'manual']) mode?: 'auto' | 'manual';
  @IsOptional() @IsArray() @IsIn(API_ROLES, { each: true }) api_roles?: string[];
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => IdentityCorpusRoleDto) corpus_roles?: IdentityCorpusRoleDto[];
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => IdentityAgentRoleDto) agent_roles?: IdentityAgentRoleDto[];
}

/** An agent's secrets (owner, administrator, agent_administrator only) and its identity. */
@Controller('v2/agents/:agent_key')
export class AgentAccessController {
  constructor(
    private readonly secrets: AgentSecrets,
    private readonly identities: AgentIdentities,
  ) {}

  @Get('secrets')
  @Policy('agent.administer')
  async getSecrets(@Param('agent_key') key: string) {
    return { secrets: await this.secrets.names(key) };
  }

  @OpenApi({ body: SecretsDto })
  @Put('secrets')
  @Policy('agent.administer')
  async replaceSecrets(@Param('agent_key') key: string, @Body() body: unknown, @Ctx() ctx: CommandContext) {
    const dto = validateBody(SecretsDto, body);
    return { secrets: await this.secrets.change(key, (body as SecretsDto).secrets ?? dto.secrets, 'replace', ctx) };
  }

  @OpenApi({ body: SecretsDto })
  @Patch('secrets')
  @Policy('agent.administer')
  async patchSecrets(@Param('agent_key') key: string, @Body() body: unknown, @Ctx() ctx: CommandContext) {
    const dto = validateBody(SecretsDto, body);
    return { secrets: await this.secrets.change(key, (body as SecretsDto).secrets ?? dto.secrets, 'patch', ctx) };
  }

  @Get('identity')
  @Policy('agent.view')
  async getIdentity(@Param('agent_key') key: string) {
    return this.identities.get(key);
  }

  @OpenApi({ body: IdentityDto })
  @Patch('identity')
  @Policy('agent.administer')
  async patchIdentity(@Param('agent_key') key: string, @Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext) {
    validateBody(IdentityDto, body);
    return this.identities.update(key, body as IdentityDto, caller, ctx);
  }
}
