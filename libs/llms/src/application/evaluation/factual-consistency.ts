import { Inject, Injectable } from '@nestjs/common';
import { CommandContext, DomainError, invalid, OUTBOUND_HTTP, OutboundHttp, outboundRefusal, SERVICE_CONFIG, ServiceConfig, unavailable } from '@lib/platform';
import { ChatCompletions } from '../chat/chat-completions';
import { parseHhemScores, parseJudgeScore } from './scores';

export const FCS_MODEL_NAMES = ['hhem_v2.3'] as const;
export const DEFAULT_FCS_MODEL = 'hhem_v2.3';

export interface FcsRequest {
  readonly generatedText: string;
  readonly sourceTexts: readonly string[];
  readonly modelName?: string;
}

/** The score, and what produced it: an HHEM endpoint or a named LLM judging (never presented as HHEM). */
export interface FcsResult {
  readonly score: number;
  readonly scorer: string;
}

const JUDGE_PROMPT =
  'You judge factual consistency. Given SOURCES and a CLAIM, output only a number between 0 and 1: the probability that every statement in the CLAIM is supported by the SOURCES (1 = fully supported, 0 = contradicted or unsupported). Judge the meaning, in any language. Output the number and nothing else.';

/**
 * Factual-consistency scoring through a configured scorer: an HHEM-compatible classification endpoint
 * (FCS_HHEM_URL) or a registered LLM as judge (FCS_JUDGE_LLM). There is no built-in scorer (docs/llms.md).
 */
@Injectable()
export class FactualConsistency {
  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    private readonly chat: ChatCompletions,
    @Inject(OUTBOUND_HTTP) private readonly outbound: OutboundHttp,
  ) {}

  async evaluate(request: FcsRequest, ctx: CommandContext): Promise<FcsResult> {
    const model = request.modelName ?? DEFAULT_FCS_MODEL;
    if (!(FCS_MODEL_NAMES as readonly string[]).includes(model)) {
      throw invalid('fcs.unknown_model', `Unknown factual consistency model "${model}"; supported: ${FCS_MODEL_NAMES.join(', ')}`, {
        'body.model_parameters.model_name': `must be one of ${FCS_MODEL_NAMES.join(', ')}`,
      });
    }
    const premise = request.sourceTexts.join('\n\n');
    if (this.config.fcsHhemUrl) return { score: await this.hhem(this.config.fcsHhemUrl, premise, request.generatedText), scorer: model };
    if (this.config.fcsJudgeLlm) return { score: await this.judge(this.config.fcsJudgeLlm, premise, request.generatedText, ctx), scorer: `llm_judge:${this.config.fcsJudgeLlm}` };
    throw unavailable(
      'fcs.not_configured',
      'Factual consistency scoring has no scorer configured on this service (503: the request is fine, the service is not set up for it). Start the service with FCS_JUDGE_LLM=<name of a registered LLM> to have that model judge, or FCS_HHEM_URL=<HHEM-compatible endpoint> (docs/llms.md)',
    );
  }

  /** Wire format: POST `{"pairs": [[premise, hypothesis]]}` → `{"scores": [p]}` (HHEM's `predict`), or HF/TEI label lists. */
  private async hhem(url: string, premise: string, hypothesis: string): Promise<number> {
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(this.config.fcsHhemApiKey ? { authorization: `Bearer ${this.config.fcsHhemApiKey}` } : {}) };
    let res: Response;
    try {
      res = await this.outbound.fetch(url, { method: 'POST', headers, body: JSON.stringify({ pairs: [[premise, hypothesis]] }), signal: AbortSignal.timeout(60_000) });
    } catch (e) {
      const refused = outboundRefusal(e);
      if (refused) throw new DomainError('upstream', 'fcs.outbound_refused', `The HHEM endpoint cannot be called: ${refused.message}`);
      const timedOut = (e as Error).name === 'TimeoutError';
      throw new DomainError(timedOut ? 'timeout' : 'upstream', 'fcs.hhem_unreachable', timedOut ? 'The HHEM endpoint did not answer within 60 s' : `The HHEM endpoint could not be reached: ${(e as Error).message}`);
    }
    const body: unknown = await res.json().catch(() => undefined);
    if (!res.ok) throw new DomainError('upstream', 'fcs.hhem_failed', `The HHEM endpoint failed (${res.status})`);
    const score = parseHhemScores(body)[0];
    if (score === undefined) throw new DomainError('upstream', 'fcs.hhem_bad_answer', 'The HHEM endpoint answered without a score (expected {"scores": [number]})');
    return score;
  }

  private async judge(llm: string, premise: string, claim: string, ctx: CommandContext): Promise<number> {
    const messages = [
      { role: 'system' as const, content: JUDGE_PROMPT },
      { role: 'user' as const, content: `SOURCES:\n${premise}\n\nCLAIM:\n${claim}` },
    ];
    const completion = await this.chat.complete({ model: llm, messages, temperature: 0 }, ctx);
    const text = completion.choices[0]?.message?.content ?? '';
    const score = parseJudgeScore(text);
    if (score === undefined) throw new DomainError('upstream', 'fcs.judge_bad_answer', `The judge LLM "${llm}" did not answer with a score between 0 and 1`);
    return score;
  }
}
