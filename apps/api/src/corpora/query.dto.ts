import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsDefined, IsIn, IsInt, IsNumber, IsObject, IsOptional, IsString, Max, MaxLength, Min, MinLength, ValidateIf, ValidateNested } from 'class-validator';
import { CITATION_STYLES, CitationStyle, MAX_TEMPLATE_LENGTH, MAX_USED_SEARCH_RESULTS, RESPONSE_LANGUAGES } from '@lib/retrieval';

export const MAX_QUERY_LENGTH = 1000;

/** The reference API's query defaults, in one place for the POST, multi-corpus and GET forms. */
export const QUERY_DEFAULTS = { lexicalInterpolation: 0.005, limit: 10, offset: 0, maxLimit: 1000 } as const;

export class ContextConfigurationDto {
  @IsOptional() @IsInt() @Min(0) characters_before?: number;
  @IsOptional() @IsInt() @Min(0) characters_after?: number;
  @IsOptional() @IsInt() @Min(0) sentences_before?: number;
  @IsOptional() @IsInt() @Min(0) sentences_after?: number;
  @IsOptional() @IsString() start_tag?: string;
  @IsOptional() @IsString() end_tag?: string;
  @IsOptional() @IsBoolean() full_document_context?: boolean;
}

export const RERANKER_TYPES = ['none', 'mmr', 'userfn', 'customer_reranker', 'chain'] as const;
/** Stages one request may chain, nested chains counted whole (the reference's documented 50). */
export const MAX_RERANKER_STAGES = 50;

/** The reference's `SearchReranker`, one of its types; fields of other types are ignored. */
export class RerankerDto {
  @IsIn(RERANKER_TYPES) type!: (typeof RERANKER_TYPES)[number];
  @ValidateIf((o: RerankerDto) => o.type === 'customer_reranker' && o.reranker_id === undefined) @IsString() @MinLength(1) @MaxLength(100) reranker_name?: string;
  @IsOptional() @IsString() reranker_id?: string;
  @ValidateIf((o: RerankerDto) => o.type === 'userfn') @IsString() @MinLength(1) @MaxLength(10_000) user_function?: string;
  @ValidateIf((o: RerankerDto) => o.type === 'mmr') @IsNumber() @Min(0) @Max(1) diversity_bias?: number;
  @IsOptional() @IsInt() @Min(1) limit?: number;
  @IsOptional() @IsNumber() cutoff?: number;
  @IsOptional() @IsBoolean() include_context?: boolean;
  @IsOptional() @IsString() instructions?: string;
  @ValidateIf((o: RerankerDto) => o.type === 'chain') @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_RERANKER_STAGES) @ValidateNested({ each: true }) @Type(() => RerankerDto) rerankers?: RerankerDto[];
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

/** The reference's `ModelParameters` ("experimental"); ranges are OpenAI's. */
export class ModelParametersDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(200) llm_name?: string;
  @IsOptional() @IsInt() @Min(1) @Max(1_000_000) max_tokens?: number;
  @IsOptional() @IsNumber() @Min(0) @Max(2) temperature?: number;
  @IsOptional() @IsNumber() @Min(-2) @Max(2) frequency_penalty?: number;
  @IsOptional() @IsNumber() @Min(-2) @Max(2) presence_penalty?: number;
}

/** The reference's `CitationParameters`. */
export class CitationsDto {
  @IsOptional() @IsIn(CITATION_STYLES) style?: CitationStyle;
  @IsOptional() @IsString() @MaxLength(2000) url_pattern?: string;
  @IsOptional() @IsString() @MaxLength(2000) text_pattern?: string;
}

/** The reference's `GenerationParameters`; `prompt_name` and `prompt_text` are its deprecated aliases. */
export class GenerationDto {
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(200) generation_preset_name?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(200) prompt_name?: string;
  @IsOptional() @IsInt() @Min(0) @Max(MAX_USED_SEARCH_RESULTS) max_used_search_results?: number;
  @IsOptional() @IsString() @MaxLength(MAX_TEMPLATE_LENGTH) prompt_template?: string;
  @IsOptional() @IsString() @MaxLength(MAX_TEMPLATE_LENGTH) prompt_text?: string;
  @IsOptional() @IsInt() @Min(0) @Max(1_000_000) max_response_characters?: number;
  @IsOptional() @IsIn(RESPONSE_LANGUAGES) response_language?: string;
  @IsOptional() @ValidateNested() @Type(() => ModelParametersDto) model_parameters?: ModelParametersDto;
  @IsOptional() @ValidateNested() @Type(() => CitationsDto) citations?: CitationsDto;
  @IsOptional() @IsBoolean() enable_factual_consistency_score?: boolean;
}

class QueryBase {
  @IsString() @MinLength(1) @MaxLength(MAX_QUERY_LENGTH) query!: string;
  @IsOptional() @IsObject() @ValidateNested() @Type(() => GenerationDto) generation?: GenerationDto | null;
  @IsOptional() @IsBoolean() stream_response?: boolean;
  @IsOptional() @IsBoolean() save_history?: boolean;
  @IsOptional() @IsBoolean() intelligent_query_rewriting?: boolean;
}

export class QueryRequestDto extends QueryBase {
  @IsDefined() @ValidateNested() @Type(() => MultiCorpusSearchDto) search!: MultiCorpusSearchDto;
}

export class QueryCorpusRequestDto extends QueryBase {
  @IsOptional() @ValidateNested() @Type(() => SearchParametersDto) search?: SearchParametersDto;
}
