import { Type } from 'class-transformer';
import { ArrayMinSize, IsArray, IsBoolean, IsIn, IsNumber, IsObject, IsOptional, IsString, Max, Min, MinLength, ValidateNested } from 'class-validator';

export const CHAT_ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;

/** Unlisted message fields (`name`, `tool_calls`, `tool_call_id`) pass through, as in OpenAI's format. */
export class ChatMessageDto {
  @IsIn(CHAT_ROLES, { message: `role must be one of ${CHAT_ROLES.join(', ')}` }) role!: (typeof CHAT_ROLES)[number];
  content?: unknown;
}

export class StreamOptionsDto {
  @IsOptional() @IsBoolean() include_usage?: boolean;
}

/** The fields the service reads; the rest of the body goes to the upstream unchanged (reference: additionalProperties). */
export class ChatCompletionDto {
  @IsString() @MinLength(1) model!: string;
  @IsArray() @ArrayMinSize(1, { message: 'messages must hold at least one message' }) @ValidateNested({ each: true }) @Type(() => ChatMessageDto) messages!: ChatMessageDto[];
  @IsOptional() @IsBoolean() stream?: boolean;
  @IsOptional() @IsNumber() @Min(0) @Max(2) temperature?: number;
  @IsOptional() @IsObject() @ValidateNested() @Type(() => StreamOptionsDto) stream_options?: StreamOptionsDto;
}
