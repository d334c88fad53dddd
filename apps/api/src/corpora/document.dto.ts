import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  Equals,
  IsArray,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { MAX_DOCUMENT_PARTS } from '@lib/corpora';
import { ImageDto, TableDto } from './attachment.dto';
import { KEY_PATTERN } from './corpus.dto';

/** The domain's bound, declared on the DTO too so that an oversized core document is refused before any work. */
export const MAX_PARTS = MAX_DOCUMENT_PARTS;
/** Tables or images one document (or section) may carry. */
export const MAX_ATTACHMENTS = 1000;

class DocumentBase {
  @IsString() @MinLength(1) @MaxLength(100) @Matches(KEY_PATTERN, { message: 'id must contain only letters, digits, underscores and hyphens' }) id!: string;
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
  @IsOptional() @IsArray() @ArrayMaxSize(MAX_ATTACHMENTS) @ValidateNested({ each: true }) @Type(() => TableDto) tables?: TableDto[];
  @IsOptional() @IsArray() @ArrayMaxSize(MAX_ATTACHMENTS) @ValidateNested({ each: true }) @Type(() => ImageDto) images?: ImageDto[];
  @IsOptional() @IsObject() custom_dimensions?: Record<string, number>;
}

export class CorePartDto {
  @IsString() text!: string;
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
  @IsOptional() @IsString() context?: string;
  @IsOptional() @IsString() table_id?: string;
  @IsOptional() @IsString() image_id?: string;
  @IsOptional() @IsIn(['text', 'image', 'image_and_text']) image_part_mode?: 'text' | 'image' | 'image_and_text';
  @IsOptional() @IsObject() custom_dimensions?: Record<string, number>;
}

export class CoreDocumentDto extends DocumentBase {
  @Equals('core') type!: 'core';
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_PARTS) @ValidateNested({ each: true }) @Type(() => CorePartDto) document_parts!: CorePartDto[];
}

export class SectionDto {
  @IsOptional() @IsInt() id?: number;
  @IsOptional() @IsString() @MaxLength(255) title?: string;
  @IsString() text!: string;
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => SectionDto) sections?: SectionDto[];
  @IsOptional() @IsArray() @ArrayMaxSize(MAX_ATTACHMENTS) @ValidateNested({ each: true }) @Type(() => TableDto) tables?: TableDto[];
  @IsOptional() @IsArray() @ArrayMaxSize(MAX_ATTACHMENTS) @ValidateNested({ each: true }) @Type(() => ImageDto) images?: ImageDto[];
}

export class ChunkingStrategyDto {
  @IsIn(['sentence_chunking_strategy', 'max_chars_chunking_strategy']) type!: 'sentence_chunking_strategy' | 'max_chars_chunking_strategy';
  @ValidateIf((o: ChunkingStrategyDto) => o.type === 'max_chars_chunking_strategy') @IsInt() @Min(100) max_chars_per_chunk?: number;
}

export class StructuredDocumentDto extends DocumentBase {
  @Equals('structured') type!: 'structured';
  @IsOptional() @IsString() @MaxLength(255) title?: string;
  @IsOptional() @IsString() @MaxLength(1000) description?: string;
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_PARTS) @ValidateNested({ each: true }) @Type(() => SectionDto) sections!: SectionDto[];
  @IsOptional() @ValidateNested() @Type(() => ChunkingStrategyDto) chunking_strategy?: ChunkingStrategyDto;
}

export class MetadataDto {
  @IsObject() metadata!: Record<string, unknown>;
}

export class BulkMetadataDto {
  @IsObject() metadata!: Record<string, unknown>;
  @IsOptional() @IsIn(['merge', 'replace']) strategy?: 'merge' | 'replace';
}
