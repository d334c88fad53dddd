import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsInt, IsObject, IsOptional, IsString, Matches, MaxLength, Min, MinLength, ValidateIf, ValidateNested } from 'class-validator';
import type { AgentInput } from '@lib/agents';
import { KEY_PATTERN } from './agents.dto';

export class ForkDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(50) @Matches(KEY_PATTERN) agent_key?: string;
  @IsString() @MinLength(1) @MaxLength(50) @Matches(KEY_PATTERN) session_key!: string;
  @IsOptional() @IsString() @MaxLength(100) include_up_to_event_id?: string | null;
}

class SessionFieldsDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) name?: string;
  @IsOptional() @IsString() @MaxLength(10000) description?: string;
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsInt() @Min(0) tti_minutes?: number;
  @IsOptional() @IsObject() secrets?: Record<string, string>;
}

export class CreateSessionDto extends SessionFieldsDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(50) @Matches(KEY_PATTERN, { message: 'key may hold only letters, digits, underscores and hyphens' }) key?: string;
  @IsOptional() @ValidateNested() @Type(() => ForkDto) from_session?: ForkDto;
  /** Pins the session to a revision of the agent (GET /v2/agents/{key}/revisions). */
  @IsOptional() @IsInt() @Min(0) agent_revision?: number;
}

export class UpdateSessionDto extends SessionFieldsDto {}

/** One part of an input message, the reference's AgentInput: text, or a skill loaded by name (`skill_name`). */
export class AgentInputDto {
  @IsIn(['text', 'skill'], { message: 'type must be text or skill' }) type!: 'text' | 'skill';
  @ValidateIf((o: AgentInputDto) => o.type !== 'skill') @IsString() @MaxLength(1_000_000) content?: string;
  @ValidateIf((o: AgentInputDto) => o.type === 'skill') @IsString() @MinLength(1) @MaxLength(64) skill_name?: string;
}

/** The parts as the session stores them. */
export const agentInputs = (messages: readonly AgentInputDto[]): AgentInput[] => messages.map((m) => (m.type === 'skill' ? { type: 'skill', skill_name: m.skill_name! } : { type: 'text', content: m.content! }));

/** The fields of a part that do not go with its type: a skill has no content, a text no skill_name. */
export function misplacedInputFields(messages: readonly AgentInputDto[], prefix = 'messages'): Record<string, string> {
  const out: Record<string, string> = {};
  messages.forEach((m, i) => {
    if (m.type === 'skill' && m.content !== undefined) out[`${prefix}.${i}.content`] = 'a skill input has no content (the skill is loaded by its skill_name)';
    if (m.type === 'text' && m.skill_name !== undefined) out[`${prefix}.${i}.skill_name`] = 'a text input has no skill_name (use type skill)';
  });
  return out;
}

export class InputMessageDto {
  @IsOptional() @IsIn(['input_message']) type?: 'input_message';
  @IsOptional() @IsBoolean() stream_response?: boolean;
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(100) @ValidateNested({ each: true }) @Type(() => AgentInputDto) messages!: AgentInputDto[];
  @IsOptional() @IsString() @Matches(/^(start|aev_[0-9a-zA-Z_-]+)$/, { message: 'since must be start or an event id (aev_…)' }) since?: string;
  @IsOptional() @IsIn(['steer', 'follow_up']) behavior?: 'steer' | 'follow_up';
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) entry_step?: string;
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) external_id?: string;
}

export class InterruptDto {
  @IsIn(['interrupt']) type!: 'interrupt';
  @IsOptional() @IsBoolean() stream_response?: boolean;
}

export class CompactDto {
  @IsIn(['compact']) type!: 'compact';
  @IsOptional() @IsBoolean() stream_response?: boolean;
  @IsOptional() @IsString() @MaxLength(100) compact_up_to_event_id?: string;
  @IsOptional() @IsString() @MaxLength(10000) compaction_message?: string;
}

export class ToolOutputItemDto {
  @IsIn(['success', 'error']) type!: 'success' | 'error';
  @IsString() @MinLength(1) @MaxLength(100) event_id!: string;
  @IsOptional() @IsObject() output?: Record<string, unknown>;
  @IsOptional() error?: unknown;
}

export class ToolOutputDto {
  @IsIn(['tool_output']) type!: 'tool_output';
  @IsOptional() @IsBoolean() stream_response?: boolean;
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(100) @ValidateNested({ each: true }) @Type(() => ToolOutputItemDto) tool_outputs!: ToolOutputItemDto[];
}

/** A person's decision on a tool call waiting for approval (docs/agents.md, "A human approves tool calls"). */
export class ToolApprovalDto {
  @IsIn(['tool_approval']) type!: 'tool_approval';
  @IsOptional() @IsBoolean() stream_response?: boolean;
  @IsString() @MinLength(1) @MaxLength(255) tool_call_id!: string;
  @IsIn(['approve', 'deny'], { message: 'decision must be approve or deny' }) decision!: 'approve' | 'deny';
  @IsOptional() @IsObject() arguments?: Record<string, unknown>;
  @IsOptional() @IsString() @MaxLength(10000) reason?: string;
}
