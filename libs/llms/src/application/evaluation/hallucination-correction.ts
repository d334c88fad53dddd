import { Inject, Injectable } from '@nestjs/common';
import { CommandContext, DomainError, invalid, READ_STORE, ReadStore } from '@lib/platform';
import { LLMS, LlmRow } from '../../read-models';
import { ChatCompletions } from '../chat/chat-completions';

export interface CorrectionRequest {
  readonly generatedText: string;
  readonly documents: readonly string[];
  readonly modelName: string;
  readonly query?: string;
}

export interface Correction {
  readonly original_text: string;
  readonly corrected_text: string;
  readonly explanation: string;
}

const PROMPT = `You correct hallucinations. You get SOURCES and a GENERATED TEXT (and sometimes the QUERY it answers).
Make the fewest edits that make every statement of the text supported by the sources: fix or remove what the
sources contradict or do not support; keep everything else word for word. Answer with JSON only, no prose:
{"corrected_text": "<the whole text after your edits>", "corrections": [{"original_text": "<a span of the text as
it was>", "corrected_text": "<the span as it is now, empty if removed>", "explanation": "<why>"}]}.
With nothing to correct, corrected_text is the text unchanged and corrections is [].`;

/**
 * Hallucination correction (`/v2/hallucination_correctors`, docs/llms.md) through a registered model: each
 * enabled LLM is a corrector (the reference's `HallucinationCorrector`, id `hcm_<n>` from the model's id), and a
 * correction asks it for minimal edits as JSON, checked before it is answered.
 */
@Injectable()
export class HallucinationCorrection {
  constructor(
    private readonly chat: ChatCompletions,
    @Inject(READ_STORE) private readonly reads: ReadStore,
  ) {}

  async correctors(): Promise<Record<string, unknown>[]> {
    const llms = await this.reads.find<LlmRow>(LLMS, { where: [{ field: 'enabled', op: 'eq', value: true }], limit: 1000 });
    return llms.items.map((l) => ({ id: `hcm_${l.id.replace(/\D/g, '') || '0'}`, name: l.name, type: 'llm', description: `Corrects through the registered model "${l.name}": minimal edits, each explained`, enabled: true }));
  }

  async correct(request: CorrectionRequest, ctx: CommandContext): Promise<{ corrected_text: string; corrections: Correction[]; model: string }> {
    const llms = await this.reads.find<LlmRow>(LLMS, { where: [{ field: 'name', op: 'eq', value: request.modelName }], limit: 1 });
    if (!llms.items[0]?.enabled) throw invalid('hcm.unknown_model', `Invalid model_name: no enabled registered model "${request.modelName}" (GET /v2/hallucination_correctors lists them)`, { model_name: 'no such model' });
    const sources = request.documents.map((d, i) => `[${i + 1}] ${d}`).join('\n\n');
    const user = `SOURCES:\n${sources}\n\n${request.query ? `QUERY:\n${request.query}\n\n` : ''}GENERATED TEXT:\n${request.generatedText}`;
    const completion = await this.chat.complete({ model: request.modelName, messages: [{ role: 'system', content: PROMPT }, { role: 'user', content: user }], temperature: 0 }, ctx);
    const parsed = parseCorrection(completion.choices[0]?.message?.content ?? '');
    if (!parsed) throw new DomainError('upstream', 'hcm.bad_answer', `The model "${request.modelName}" did not answer with the corrected text and corrections as JSON`);
    return { ...parsed, model: request.modelName };
  }
}

/** The model's JSON answer (fenced or bare), if it has the shape asked for. */
export function parseCorrection(text: string): { corrected_text: string; corrections: Correction[] } | undefined {
  const body = text.trim().replace(/^```(?:json)?\s*/i, '').replace(/```$/, '').trim();
  let v: unknown;
  try {
    v = JSON.parse(body);
  } catch {
    return undefined;
  }
  const o = v as { corrected_text?: unknown; corrections?: unknown };
  if (typeof o?.corrected_text !== 'string' || !Array.isArray(o.corrections)) return undefined;
  const corrections: Correction[] = [];
  for (const c of o.corrections as Record<string, unknown>[]) {
    if (typeof c?.original_text !== 'string' || typeof c.corrected_text !== 'string' || typeof c.explanation !== 'string') return undefined;
    corrections.push({ original_text: c.original_text, corrected_text: c.corrected_text, explanation: c.explanation });
  }
  return { corrected_text: o.corrected_text, corrections };
}
