import { compileTextPattern, PatternSyntaxError, ReadStore, ServiceConfig } from '@lib/platform';
import { findLlm } from '@lib/llms';
import type { ReferenceCheck } from '../agent-writer';

/**
 * A guardrail's patterns compile on RE2's engine (linear in the text whatever the pattern: no pattern a user
 * writes can hold the event loop; lookaround and backreferences are refused here, never at match time), and a
 * judge names a registered model, and a grounding guardrail has a factual-consistency scorer to ask (without one it
 * would block every grounded answer: it fails closed). The shapes are checked first by the domain (`guardrailProblems`).
 */
export const guardrailReferenceCheck =
  (reads: ReadStore, service: Pick<ServiceConfig, 'fcsHhemUrl' | 'fcsJudgeLlm'>): ReferenceCheck =>
  async (config) => {
    const problems: Record<string, string> = {};
    for (const [i, g] of (config.guardrails ?? []).entries()) {
      if (g.type === 'pattern') {
        g.patterns.forEach((p, j) => {
          try {
            compileTextPattern(p);
          } catch (e) {
            problems[`guardrails[${i}].patterns[${j}]`] = `is not a regular expression RE2 accepts (no lookaround or backreferences): ${e instanceof PatternSyntaxError ? e.message : 'invalid'}`;
          }
        });
      }
      if (g.type === 'grounding' && !service.fcsHhemUrl && !service.fcsJudgeLlm) problems[`guardrails[${i}].type`] = 'grounding needs the service\'s factual-consistency scorer, and none is configured (FCS_HHEM_URL or FCS_JUDGE_LLM, docs/llms.md)';
      if (g.type === 'judge' && !(await findLlm(reads, g.llm_name))) problems[`guardrails[${i}].llm_name`] = `no LLM named "${g.llm_name}" is registered (GET /v2/llms lists them)`;
    }
    return problems;
  };
