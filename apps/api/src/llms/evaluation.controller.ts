import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { FactualConsistency } from '@lib/llms';
import type { CommandContext } from '@lib/platform';
import { Ctx } from '../http/command-context';
import { BodyLimit } from '../http/body-limit';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { EvaluateFcsDto } from './llms.dto';
import { OpenApi } from '../openapi/openapi.decorator';

/** Factual-consistency scoring of a generated text against its sources (docs/llms.md: scorers). */
@Controller('v2/evaluate_factual_consistency')
export class EvaluationController {
  constructor(private readonly fcs: FactualConsistency) {}

  @OpenApi({ body: EvaluateFcsDto, statuses: [503] })
  @Post()
  @BodyLimit(50) // a generated text and its sources
  @Policy('llm.use')
  @HttpCode(200)
  async evaluate(@Body() body: unknown, @Ctx() ctx: CommandContext) {
    const dto = validateBody(EvaluateFcsDto, body);
    return this.fcs.evaluate({ generatedText: dto.generated_text, sourceTexts: dto.source_texts, modelName: dto.model_parameters?.model_name }, ctx);
  }
}
