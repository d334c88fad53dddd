import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsInt, IsNumber, IsObject, IsOptional, IsString, Max, MaxLength, Min, MinLength, ValidateNested } from 'class-validator';

export const MAX_QUERY_LENGTH = 1000;

export class ContextConfigurationDto {
  @IsOptional() @IsInt() @Min(0) characters_before?: number;
  @IsOptional() @IsInt() @Min(0) characters_after?: number;
  @IsOptional() @IsInt() @Min(0) sentences_before?: number;
  @IsOptional() @IsInt() @Min(0) sentences_after?: number;
  @IsOptional() @IsString() start_tag?: string;
  @IsOptional() @IsString() end_tag?: string;
  @IsOptional() @IsBoolean() full_document_context?: boolean;
}

export class RerankerDto {
  @IsString() type!: string;
  @IsOptional() @IsString() reranker_name?: string;
}

/** Per-corpus search settings; `lexical_interpolation` 0 to 1 (spec). */
export class CorpusSearchFieldsDto {
  @IsOptional() @IsString() @MaxLength(8000) metadata_filter?: string;
  @IsOptional() @IsNumber() @Min(0) @Max(1) lexical_interpolation?: number;
  @IsOptional() @IsIn(['default', 'query', 'response']) semantics?: string;
  @IsOptional() @IsObject() custom_dimensions?: Record<string, number>;
}

export class KeyedCorpusDto extends CorpusSearchFieldsDto {
  @IsString() @MinLength(1) @MaxLength(100) corpus_key!: string;
  @IsOptional() @IsString() @MaxLength(MAX_QUERY_LENGTH) query?: string;
}

class SearchParametersDto extends CorpusSearchFieldsDto {
  @IsOptional() @IsInt() @Min(0) offset?: number;
  @IsOptional() @IsInt() @Min(1) @Max(1000) limit?: number;
  @IsOptional() @ValidateNested() @Type(() => ContextConfigurationDto) context_configuration?: ContextConfigurationDto;
  @IsOptional() @ValidateNested() @Type(() => RerankerDto) reranker?: RerankerDto;
  @IsOptional() @IsIn(['doc.id']) max_by?: 'doc.id';
}

export class MultiCorpusSearchDto extends SearchParametersDto {
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(100) @ValidateNested({ each: true }) @Type(() => KeyedCorpusDto) corpora!: KeyedCorpusDto[];
}

class QueryBase {
  @IsString() @MinLength(1) @MaxLength(MAX_QUERY_LENGTH) query!: string;
  @IsOptional() @IsObject() generation?: Record<string, unknown>;
  @IsOptional() @IsBoolean() stream_response?: boolean;
  @IsOptional() @IsBoolean() save_history?: boolean;
  @IsOptional() @IsBoolean() intelligent_query_rewriting?: boolean;
}

export class QueryRequestDto extends QueryBase {
  @ValidateNested() @Type(() => MultiCorpusSearchDto) search!: MultiCorpusSearchDto;
}

export class QueryCorpusRequestDto extends QueryBase {
  @IsOptional() @ValidateNested() @Type(() => SearchParametersDto) search?: SearchParametersDto;
}
