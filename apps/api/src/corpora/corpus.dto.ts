import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsNumber, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength, ValidateNested } from 'class-validator';

export const KEY_PATTERN = /^[A-Za-z0-9_-]+$/;
const KEY_MESSAGE = 'must contain only letters, digits, underscores and hyphens';

export class FilterAttributeDto {
  @IsString() @MinLength(1) @MaxLength(255) name!: string;
  @IsIn(['document', 'part']) level!: 'document' | 'part';
  @IsOptional() @IsString() @MaxLength(1000) description?: string;
  @IsOptional() @IsBoolean() indexed?: boolean;
  @IsIn(['integer', 'real_number', 'text', 'boolean', 'list[integer]', 'list[real_number]', 'list[text]'])
  type!: 'integer' | 'real_number' | 'text' | 'boolean' | 'list[integer]' | 'list[real_number]' | 'list[text]';
}

/** Limits from the spec: key ≤ 100 (letters, digits, _ and -), name ≤ 255, description ≤ 1000. */
export class CreateCorpusDto {
  @IsString() @MinLength(1) @MaxLength(100) @Matches(KEY_PATTERN, { message: `key ${KEY_MESSAGE}` }) key!: string;
  @IsString() @MinLength(1) @MaxLength(255) name!: string;
  @IsOptional() @IsString() @MaxLength(1000) description?: string;
  @IsOptional() @IsInt() @Min(1) request_timeout?: number;
  @IsOptional() @IsInt() @Min(1) request_timeout_millis?: number;
  @IsOptional() @IsBoolean() save_history?: boolean;
  @IsOptional() @IsBoolean() queries_are_answers?: boolean;
  @IsOptional() @IsBoolean() documents_are_questions?: boolean;
  @IsOptional() @IsString() @MaxLength(255) encoder_name?: string;
  @IsOptional() @IsArray() @ArrayMaxSize(100) @ValidateNested({ each: true }) @Type(() => FilterAttributeDto) filter_attributes?: FilterAttributeDto[];
  @IsOptional() @IsArray() @ArrayMaxSize(0, { message: 'custom_dimensions are not supported' }) custom_dimensions?: unknown[];
}

export class UpdateCorpusDto {
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) name?: string;
  @IsOptional() @IsString() @MaxLength(1000) description?: string;
  @IsOptional() @IsBoolean() save_history?: boolean;
}

export class ReplaceFilterAttributesDto {
  @IsArray() @ArrayMaxSize(100) @ValidateNested({ each: true }) @Type(() => FilterAttributeDto) filter_attributes!: FilterAttributeDto[];
}

export class FieldQueryDto {
  @IsString() @MinLength(1) @MaxLength(100) field!: string;
  @IsOptional() @IsString() @MaxLength(1000) query?: string;
  @IsOptional() @IsNumber() @Min(0) @Max(1000) weight?: number;
  @IsOptional() @IsBoolean() fuzzy?: boolean;
  @IsOptional() @IsInt() @Min(1) prefix?: number | null;
}

/** The reference's MetadataQueryRequest. */
export class MetadataQueryDto {
  @IsOptional() @IsIn(['document', 'part']) level?: 'document' | 'part';
  /** Required by the reference; an empty list ranks every document (score 0) within the filter. */
  @IsArray() @ArrayMaxSize(20) @ValidateNested({ each: true }) @Type(() => FieldQueryDto) queries!: FieldQueryDto[];
  @IsOptional() @IsString() @MaxLength(10_000) metadata_filter?: string;
  @IsOptional() @IsInt() @Min(1) @Max(100) limit?: number;
  @IsOptional() @IsInt() @Min(0) @Max(10_000) offset?: number;
}
