import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsIn, IsInt, IsObject, IsOptional, IsString, Max, MaxLength, Min, MinLength, ValidateNested } from 'class-validator';
import { LLM_AUTH_TYPES, LLM_TYPES, MAX_IDLE_TIMEOUT_SECONDS } from '@lib/llms';

/** Every field of every auth variant; `toAuth` checks which a variant needs (the reference API's LLMAuth union). */
export class AuthDto {
  @IsIn(LLM_AUTH_TYPES, { message: `type must be one of ${LLM_AUTH_TYPES.join(', ')}` }) type!: (typeof LLM_AUTH_TYPES)[number];
  @IsOptional() @IsString() @MinLength(1) @MaxLength(8192) token?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) header?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(8192) value?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(1024) client_id?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(8192) client_secret?: string;
  @IsOptional() @IsString() @MaxLength(2048) token_endpoint?: string;
  @IsOptional() @IsArray() @IsString({ each: true }) scopes?: string[];
  @IsOptional() @IsString() @MinLength(1) @MaxLength(128) aws_access_key_id?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(1024) aws_secret_access_key?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(64) region?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(8192) api_key?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(32768) key_json?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) project?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(8192) access_token?: string;
}

export class CapabilitiesDto {
  @IsOptional() @IsBoolean() image_support?: boolean;
  @IsOptional() @IsInt() @Min(4096) context_limit?: number;
  @IsOptional() @IsBoolean() tool_calling?: boolean;
  @IsOptional() @IsBoolean() structured_outputs?: boolean;
  @IsOptional() @IsBoolean() requires_role_alternation?: boolean;
}

export class QuotaDto {
  @IsOptional() @IsInt() @Min(1) requests_per_second?: number;
  @IsOptional() @IsInt() @Min(1) input_tokens_per_minute?: number;
  @IsOptional() @IsInt() @Min(1) output_tokens_per_minute?: number;
  @IsOptional() @IsInt() @Min(1) input_tokens_per_day?: number;
  @IsOptional() @IsInt() @Min(1) output_tokens_per_day?: number;
  @IsOptional() @IsInt() @Min(1) input_tokens_per_month?: number;
  @IsOptional() @IsInt() @Min(1) output_tokens_per_month?: number;
}

const TYPE_MESSAGE = `type must be one of ${LLM_TYPES.join(', ')} (docs/llms.md)`;

/** Fields every LLM request shares (all optional); `null` clears `idle_timeout_seconds` and `llm_quota`. */
class LlmFieldsDto {
  @IsOptional() @IsIn(LLM_TYPES, { message: TYPE_MESSAGE }) type?: (typeof LLM_TYPES)[number];
  @IsOptional() @IsString() @MaxLength(1000) description?: string;
  @IsOptional() @ValidateNested() @Type(() => AuthDto) auth?: AuthDto;
  @IsOptional() @IsObject() headers?: Record<string, string>;
  @IsOptional() @IsInt() @Min(1) @Max(MAX_IDLE_TIMEOUT_SECONDS) idle_timeout_seconds?: number | null;
  @IsOptional() @IsBoolean() enabled?: boolean;
  /** Accepted for compatibility; registration does not call the model (use POST /v2/llms/discover). */
  @IsOptional() @IsObject() test_model_parameters?: Record<string, unknown>;
  @IsOptional() @ValidateNested() @Type(() => CapabilitiesDto) capabilities?: CapabilitiesDto;
  @IsOptional() @ValidateNested() @Type(() => QuotaDto) llm_quota?: QuotaDto | null;
}

/** A PATCH: every field optional; the name never changes. */
export class UpdateLlmDto extends LlmFieldsDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) model?: string;
  @IsOptional() @IsString() @MaxLength(2048) uri?: string;
}

/** `uri` may be left out for `anthropic` (its default, or the Bedrock/Vertex endpoint of the auth's region); the registry says where it is required. */
export class CreateLlmDto extends LlmFieldsDto {
  @IsString() @MinLength(1) @MaxLength(255) name!: string;
  @IsString() @MinLength(1) @MaxLength(255) model!: string;
  @IsOptional() @IsString() @MaxLength(2048) uri?: string;
}

/** A candidate to probe: what a creation takes, the name optional. */
export class DiscoverLlmDto extends LlmFieldsDto {
  @IsOptional() @IsString() @MaxLength(255) name?: string;
  @IsString() @MinLength(1) @MaxLength(255) model!: string;
  @IsOptional() @IsString() @MaxLength(2048) uri?: string;
}

export class FcsModelParametersDto {
  @IsOptional() @IsString() model_name?: string;
}

/** `language` is not a field: text in any language is scored (an unknown field is refused, as everywhere). */
export class EvaluateFcsDto {
  @IsString() generated_text!: string;
  @IsArray() @IsString({ each: true }) source_texts!: string[];
  @IsOptional() @ValidateNested() @Type(() => FcsModelParametersDto) model_parameters?: FcsModelParametersDto;
}
