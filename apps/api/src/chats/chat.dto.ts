import { Type } from 'class-transformer';
import { IsBoolean, IsOptional, ValidateNested } from 'class-validator';
import { QueryRequestDto } from '../corpora/query.dto';

/** The reference's `ChatParameters`. */
export class ChatParametersDto {
  @IsOptional() @IsBoolean() store?: boolean;
}

/** The reference's `ChatRequest`: a query request plus `chat`; `save_history` (default true) overrides `chat.store`. */
export class ChatRequestDto extends QueryRequestDto {
  @IsOptional() @ValidateNested() @Type(() => ChatParametersDto) chat?: ChatParametersDto;
}

/** The reference's `UpdateTurnRequest`. */
export class UpdateTurnDto {
  @IsOptional() @IsBoolean() enabled?: boolean;
}
