import { Injectable } from '@nestjs/common';
import { RE2JS } from 're2js';
import { ChatCompletions, FactualConsistency } from '@lib/llms';
import { CommandContext, DomainError } from '@lib/platform';
import { DEFAULT_GUARDRAIL_THRESHOLD, type GuardrailAction, type GuardrailConfig, type GuardrailPoint, type GuardrailType, REDACTION_MARK } from '../../domain/guardrails';
import { parseJudgeAnswer } from '../../domain/turn-record';

/** One guardrail that fired: what it checked, its score where it has one, what it did and why. */
export interface GuardrailDecision {
  readonly guardrail: string;
  readonly type: GuardrailType;
  readonly on: GuardrailPoint;
  readonly action: GuardrailAction;
  readonly score?: number;
  readonly reason: string;
}

/** The text after the guardrails of one point: masked where one redacted; `stop` is the first block or regenerate. */
export interface GuardrailOutcome {
  readonly text: string;
  readonly decisions: readonly GuardrailDecision[];
  readonly stop?: GuardrailDecision;
}

export interface GuardrailSubject {
  /** What the text is, as the judge is told (`USER INPUT`, `ASSISTANT ANSWER`, `TOOL CALL`). */
  readonly label: string;
  /** The turn's retrieved texts, the grounding sources. */
  readonly sources?: readonly string[];
  readonly ctx: CommandContext;
}

const JUDGE_PROMPT =
  'You check one text against a POLICY. Answer only one JSON object and nothing else: {"score": <a number from 0 to 1, 1 fully complying with the policy, 0 clearly violating it>, "reason": "<one short sentence>"}';

const compiled = new Map<string, RE2JS>();
/** RE2 (re2js): linear in the text; the patterns were compiled once already when the configuration was written. */
function re2(source: string): RE2JS {
  let re = compiled.get(source);
  if (!re) {
    re = RE2JS.compile(source);
    if (compiled.size >= 1000) compiled.clear();
    compiled.set(source, re);
  }
  return re;
}

/** Masks every match of the patterns; how many there were. */
export function redact(patterns: readonly string[], text: string): { readonly text: string; readonly matches: number } {
  let matches = 0;
  let out = text;
  for (const p of patterns) {
    out = re2(p)
      .matcher(out)
      .replaceAll(() => (matches++, REDACTION_MARK));
  }
  return { text: out, matches };
}

/**
 * Runs guardrails over one text, in the order the configuration lists them: a redaction masks the text the next
 * ones see, the first `block` or `regenerate` stops the rest. A scorer or judge that fails counts as triggered
 * (fail closed): a guardrail that cannot say the text is fine does not let it through.
 */
@Injectable()
export class GuardrailChecks {
  constructor(
    private readonly fcs: FactualConsistency,
    private readonly chat: ChatCompletions,
  ) {}

  async check(guards: readonly { name: string; guard: GuardrailConfig }[], on: GuardrailPoint, text: string, subject: GuardrailSubject): Promise<GuardrailOutcome> {
    const decisions: GuardrailDecision[] = [];
    let current = text;
    for (const { name, guard } of guards) {
      const verdict = await this.one(guard, current, subject);
      if (!verdict) continue;
      const decision: GuardrailDecision = { guardrail: name, type: guard.type, on, action: guard.action, ...(verdict.score !== undefined ? { score: verdict.score } : {}), reason: verdict.reason };
      decisions.push(decision);
      if (guard.action === 'redact' && verdict.redacted !== undefined) current = verdict.redacted;
      if (guard.action === 'block' || guard.action === 'regenerate') return { text: current, decisions, stop: decision };
    }
    return { text: current, decisions };
  }

  /** Undefined when the text passes. */
  private async one(guard: GuardrailConfig, text: string, subject: GuardrailSubject): Promise<{ score?: number; reason: string; redacted?: string } | undefined> {
    switch (guard.type) {
      case 'pattern': {
        const { text: redacted, matches } = redact(guard.patterns, text);
        // The matched text is never repeated: it is what the pattern keeps out.
        return matches ? { reason: `${matches} match${matches > 1 ? 'es' : ''} of its patterns`, redacted } : undefined;
      }
      case 'grounding': {
        if (!subject.sources?.length) return undefined;
        const threshold = guard.threshold ?? DEFAULT_GUARDRAIL_THRESHOLD;
        try {
          const r = await this.fcs.evaluate({ generatedText: text, sourceTexts: subject.sources }, subject.ctx);
          return r.score < threshold ? { score: r.score, reason: `factual consistency ${r.score.toFixed(3)} against ${subject.sources.length} retrieved texts is below ${threshold} (${r.scorer})` } : undefined;
        } catch (e) {
          return { reason: `the factual-consistency scorer failed: ${e instanceof DomainError ? e.message : 'unexpected error'}` };
        }
      }
      case 'judge': {
        const threshold = guard.threshold ?? DEFAULT_GUARDRAIL_THRESHOLD;
        try {
          const completion = await this.chat.complete({ model: guard.llm_name, temperature: 0, messages: [{ role: 'system', content: JUDGE_PROMPT }, { role: 'user', content: `POLICY:\n${guard.policy}\n\n${subject.label}:\n${text}` }] }, subject.ctx);
          const parsed = parseJudgeAnswer(completion.choices[0]?.message?.content ?? '');
          if ('error' in parsed) return { reason: `judge "${guard.llm_name}": ${parsed.error}` };
          return parsed.score < threshold ? { score: parsed.score, reason: parsed.reason ?? `judge "${guard.llm_name}" scored ${parsed.score} against the policy, below ${threshold}` } : undefined;
        } catch (e) {
          return { reason: `judge "${guard.llm_name}" failed: ${e instanceof DomainError ? e.message : 'unexpected error'}` };
        }
      }
      default: {
        const _exhaustive: never = guard;
        return _exhaustive;
      }
    }
  }
}
