import { Allow, ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsObject, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';

/** `POST /v2/agents/{agent_key}/evaluations` (docs/evaluations.md): the shape; the rest is checked against the agent. */
export class CreateEvaluationDto {
  /** `{"session_keys": [...]}` or `{"metadata_filter"?, "created_after"?, "limit"?}`. */
  @IsObject() sessions!: Record<string, unknown>;
  /** A revision number, or "current". */
  @Allow() candidate_revision!: number | 'current';
  @IsOptional() @IsIn(['recorded', 'live_model'], { message: 'mode must be recorded or live_model' }) mode?: 'recorded' | 'live_model';
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(10) @IsObject({ each: true }) scorers!: Record<string, unknown>[];
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) name?: string;
}
