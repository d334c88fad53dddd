import { IsBoolean, IsIn, IsOptional, IsString, MaxLength, MinLength, ValidateIf, IsInt, Min } from 'class-validator';

/** `POST /v2/agents/{agent_key}/sessions/{session_key}/replay` (docs/replay.md). */
export class ReplayDto {
  /** A revision number (GET /v2/agents/{key}/revisions), or "current" (the default). */
  @IsOptional() @ValidateIf((o: ReplayDto) => o.agent_revision !== 'current') @IsInt({ message: 'agent_revision must be a revision number or "current"' }) @Min(0) agent_revision?: number | 'current';
  @IsOptional() @IsIn(['recorded', 'live_model', 'live'], { message: 'mode must be recorded, live_model or live' }) mode?: 'recorded' | 'live_model' | 'live';
  @IsOptional() @IsString() @MinLength(1) @MaxLength(100) from_event_id?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(100) until_event_id?: string;
  @IsOptional() @IsBoolean() allow_side_effects?: boolean;
}
