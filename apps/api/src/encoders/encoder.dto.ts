import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength, ValidateNested } from 'class-validator';
import { AuthDto } from '../llms/llms.dto';

/**
 * The reference's `CreateOpenAIEncoderRequest`. `vllm-compatible` (image embeddings) is refused by its `type`:
 * corpora here embed no images (docs/corpora.md).
 */
export class CreateEncoderDto {
  @IsIn(['openai-compatible'], { message: 'type must be "openai-compatible" (image encoders are not supported)' }) type!: 'openai-compatible';
  @IsString() @MinLength(1) @MaxLength(255) name!: string;
  @IsString() @MaxLength(2048) description!: string;
  @IsString() @MinLength(1) @MaxLength(2048) uri!: string;
  @IsString() @MinLength(1) @MaxLength(255) model!: string;
  @IsOptional() @IsInt() @Min(1) @Max(16_384) output_dimensions?: number;
  @IsOptional() @ValidateNested() @Type(() => AuthDto) auth?: AuthDto;
}
