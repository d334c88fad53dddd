import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsDefined, IsIn, IsInt, IsNumber, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength, ValidateNested } from 'class-validator';
import { QuotaDto } from '../llms/llms.dto';

export const KEY_PATTERN = /^[0-9a-zA-Z_-]+$/;

export class RetryConfigurationDto {
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsInt() @Min(0) @Max(10) max_retries?: number;
  @IsOptional() @IsInt() @Min(100) @Max(60000) initial_backoff_ms?: number;
  @IsOptional() @IsInt() @Min(1000) @Max(300000) max_backoff_ms?: number;
  @IsOptional() @IsNumber() @Min(1) @Max(10) backoff_factor?: number;
}

export class AgentModelDto {
  @IsString() @MinLength(1) @MaxLength(255) name!: string;
  @IsOptional() @IsObject() parameters?: Record<string, unknown>;
  @IsOptional() @ValidateNested() @Type(() => RetryConfigurationDto) retry_configuration?: RetryConfigurationDto;
}

export class CompactionDto {
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsInt() @Min(50) @Max(95) threshold_percent?: number;
  @IsOptional() @IsInt() @Min(1) keep_recent_inputs?: number;
  @IsOptional() @IsString() @MaxLength(10000) compaction_message?: string;
  @IsOptional() @IsIn(['exclude', 'include_outputs', 'include_all']) tool_event_policy?: string;
}

export class OffloadingDto {
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsIn(['artifact', 'truncate']) mode?: string;
  @IsOptional() @IsNumber() @Min(0.01) @Max(1) context_percentage?: number;
  @IsOptional() @IsInt() @Min(1024) max_threshold_bytes?: number;
  @IsOptional() @IsInt() @Min(1024) min_threshold_bytes?: number;
  @IsOptional() @IsNumber() @Min(0.01) @Max(1) headroom_percentage?: number;
}

/**
 * Fields a create, a replace and a patch share; the maps (steps, tools) are checked by the domain. Required
 * fields are declared only on the create DTO: class-validator keeps a parent's `@IsOptional`, so a field optional
 * here could not be made required there.
 */
class AgentFieldsDto {
  @IsOptional() @IsString() @MaxLength(10000) description?: string | null;
  @IsOptional() @IsObject() first_step?: Record<string, unknown>;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) first_step_name?: string;
  @IsOptional() @IsObject() steps?: Record<string, unknown> | null;
  @IsOptional() @IsObject() metadata?: Record<string, unknown> | null;
  @IsOptional() @IsBoolean() enabled?: boolean | null;
  @IsOptional() @ValidateNested() @Type(() => CompactionDto) compaction?: CompactionDto | null;
  @IsOptional() @ValidateNested() @Type(() => OffloadingDto) tool_output_offloading?: OffloadingDto | null;
  @IsOptional() @ValidateNested() @Type(() => QuotaDto) llm_quota?: QuotaDto | null;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(10000) run_condition?: string | null;
  @IsOptional() @IsObject() session_enrichment?: Record<string, unknown> | null;
  /** A map of skill names to skills, checked by the domain (`skillProblems`: a map class-validator cannot walk). */
  @IsOptional() @IsObject() skills?: Record<string, unknown> | null;
  /** Guardrails (issue 46), checked by the domain (`guardrailProblems`: a list of three shapes). */
  @IsOptional() @IsArray() guardrails?: unknown[] | null;
  /** `{"blocks": [...]}`, checked by the domain (`memoryProblems`: field by field, `memory.blocks[i].<field>`). */
  @IsOptional() @IsObject() memory?: Record<string, unknown> | null;
}

export class CreateAgentDto extends AgentFieldsDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(50) @Matches(KEY_PATTERN, { message: 'key may hold only letters, digits, underscores and hyphens' }) key?: string;
  @IsString() @MinLength(1) @MaxLength(50) name!: string;
  /** Required by the reference's CreateAgentRequest; omitted here means none (`{}`), docs/conformance.md. */
  @IsOptional() @IsObject() tool_configurations?: Record<string, unknown>;
  @IsDefined() @ValidateNested() @Type(() => AgentModelDto) model!: AgentModelDto;
}

export class UpdateAgentDto extends AgentFieldsDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(50) name?: string;
  @IsOptional() @IsObject() tool_configurations?: Record<string, unknown> | null;
  @IsOptional() @ValidateNested() @Type(() => AgentModelDto) model?: AgentModelDto;
}
