import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsObject, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { MAX_TEMPLATE_LENGTH } from '@lib/retrieval';

const TEMPLATE_TYPES = ['velocity', 'text'] as const;

/**
 * Fields a create and an update share. `type` is required by the reference but has one value and a default
 * (`initial`), so a request without it is taken as `initial` rather than refused.
 */
class InstructionFieldsDto {
  @IsOptional() @IsIn(['initial']) type?: 'initial';
  @IsOptional() @IsString() @MaxLength(10000) description?: string;
  @IsOptional() @IsIn(TEMPLATE_TYPES) template_type?: (typeof TEMPLATE_TYPES)[number];
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
  @IsOptional() @IsBoolean() enabled?: boolean;
}

export class CreateInstructionDto extends InstructionFieldsDto {
  @IsString() @MinLength(1) @MaxLength(50) name!: string;
  @IsString() @MaxLength(MAX_TEMPLATE_LENGTH) template!: string;
}

export class UpdateInstructionDto extends InstructionFieldsDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(50) name?: string;
  @IsOptional() @IsString() @MaxLength(MAX_TEMPLATE_LENGTH) template?: string;
}

export class TestInstructionDto {
  @IsOptional() @IsObject() context?: Record<string, unknown>;
  @IsOptional() @IsArray() @ArrayMaxSize(1000) @IsObject({ each: true }) tools?: Record<string, unknown>[];
}
