import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength, ValidateIf, ValidateNested } from 'class-validator';
import { AuthDto } from '../llms/llms.dto';

const isEndpoint = (o: CreateEncoderDto) => o.type !== 'onnx';

/**
 * The reference's `CreateOpenAIEncoderRequest`, and an extension of ours: `type: "onnx"`, a sentence-embedding
 * model run inside the service (docs/encoders.md), from `model_dir` (inside the models root) or `model` (a
 * Hugging Face id, fetched once). `vllm-compatible` (image embeddings) is refused by its `type`: corpora here
 * embed no images (docs/corpora.md).
 */
export class CreateEncoderDto {
  @IsIn(['openai-compatible', 'onnx'], { message: 'type must be "openai-compatible" or "onnx" (image encoders are not supported)' }) type!: 'openai-compatible' | 'onnx';
  @IsString() @MinLength(1) @MaxLength(255) name!: string;
  @IsString() @MaxLength(2048) description!: string;
  @ValidateIf(isEndpoint) @IsString() @MinLength(1) @MaxLength(2048) uri?: string;
  @ValidateIf((o: CreateEncoderDto) => isEndpoint(o) || o.model !== undefined) @IsString() @MinLength(1) @MaxLength(255) model?: string;
  @IsOptional() @IsInt() @Min(1) @Max(16_384) output_dimensions?: number;
  @IsOptional() @ValidateNested() @Type(() => AuthDto) auth?: AuthDto;
  /** onnx: the model directory, relative to the models root (ENCODER_MODELS_ROOT) or absolute inside it. */
  @IsOptional() @IsString() @MinLength(1) @MaxLength(1024) model_dir?: string;
  /** onnx: the graph inside the directory, when not `model.onnx` or `onnx/model.onnx` (e.g. `onnx/model_quantized.onnx`). */
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) file?: string;
  @IsOptional() @IsIn(['mean', 'cls']) pooling?: 'mean' | 'cls';
  @IsOptional() @IsString() @MaxLength(512) query_prefix?: string;
  @IsOptional() @IsString() @MaxLength(512) document_prefix?: string;
  @IsOptional() @IsInt() @Min(2) @Max(8192) max_tokens?: number;
}

/** Fields that belong to one type only, so a request mixing them is refused rather than half-read. */
export const ONNX_ONLY_FIELDS = ['model_dir', 'file', 'pooling', 'query_prefix', 'document_prefix', 'max_tokens'] as const;
export const ENDPOINT_ONLY_FIELDS = ['uri', 'auth'] as const;
