import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsEmail, IsIn, IsOptional, IsString, Matches, MaxLength, MinLength, ValidateNested } from 'class-validator';
import { AGENT_ROLES, API_ROLES, CORPUS_ROLES, Grants } from '@lib/auth';
import { KEY_PATTERN } from '../corpora/corpus.dto';

export class CorpusRoleDto {
  @IsString() @MinLength(1) @MaxLength(100) @Matches(KEY_PATTERN) corpus_key!: string;
  @IsIn(CORPUS_ROLES) role!: (typeof CORPUS_ROLES)[number];
}

export class AgentRoleDto {
  @IsString() @MinLength(1) @MaxLength(100) @Matches(KEY_PATTERN) agent_key!: string;
  @IsIn(AGENT_ROLES) role!: (typeof AGENT_ROLES)[number];
}

/** The three role lists every principal-shaped body carries; at most 1000 entries each. */
export class GrantsDto {
  @IsOptional() @IsArray() @ArrayMaxSize(50) @IsIn(API_ROLES, { each: true }) api_roles?: (typeof API_ROLES)[number][];
  @IsOptional() @IsArray() @ArrayMaxSize(1000) @ValidateNested({ each: true }) @Type(() => CorpusRoleDto) corpus_roles?: CorpusRoleDto[];
  @IsOptional() @IsArray() @ArrayMaxSize(1000) @ValidateNested({ each: true }) @Type(() => AgentRoleDto) agent_roles?: AgentRoleDto[];
}

export const grantsOf = (dto: GrantsDto): Grants => ({
  apiRoles: [...new Set(dto.api_roles ?? [])],
  corpusRoles: (dto.corpus_roles ?? []).map((r) => ({ corpusKey: r.corpus_key, role: r.role })),
  agentRoles: (dto.agent_roles ?? []).map((r) => ({ agentKey: r.agent_key, role: r.role })),
});

export class CreateUserDto extends GrantsDto {
  @IsEmail() @MaxLength(254) email!: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(100) username?: string;
  @IsOptional() @IsString() @MaxLength(1000) description?: string;
}

export class UpdateUserDto extends GrantsDto {
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsString() @MaxLength(1000) description?: string;
}

export class CreateApiKeyDto extends GrantsDto {
  @IsString() @MinLength(1) @MaxLength(255) name!: string;
  @IsOptional() @IsIn(['serving', 'serving_and_indexing', 'personal']) api_key_role?: 'serving' | 'serving_and_indexing' | 'personal';
  /** Deprecated in the reference API in favour of corpus_roles; still honoured. */
  @IsOptional() @IsArray() @ArrayMaxSize(1000) @IsString({ each: true }) @Matches(KEY_PATTERN, { each: true }) corpus_keys?: string[];
}

export class UpdateApiKeyDto {
  @IsBoolean() enabled!: boolean;
}

export class CreateAppClientDto extends GrantsDto {
  @IsIn(['client_credentials']) type!: 'client_credentials';
  @IsString() @MinLength(1) @MaxLength(255) name!: string;
  @IsOptional() @IsString() @MaxLength(1000) description?: string;
}

export class UpdateAppClientDto extends GrantsDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) name?: string;
  @IsOptional() @IsString() @MaxLength(1000) description?: string;
}
