import type { CommandContext } from '@lib/platform';
import type { AgentConfig } from '../../domain/agent-config';
import { guardrailsAt } from '../../domain/guardrails';
import type { AgentInput, SessionEvent } from '../../domain/session-events';
import { type GuardrailChecks, type GuardrailDecision, redact } from './guardrail-checks';

/** An input after its guardrails: the messages as they are stored and the model sees them, and what fired. */
export interface GuardedInput {
  readonly messages: AgentInput[];
  readonly decisions: readonly GuardrailDecision[];
  /** The decision that stopped the input: the turn answers a refusal without calling the model. */
  readonly blocked?: GuardrailDecision;
}

/**
 * The input guardrails over each text part, before anything is stored: a redaction masks the part in what is stored
 * (so a card number a pattern masks never reaches the log), and so does a pattern that blocks (its matches are
 * what it keeps out). A judge that blocks locates nothing: the input is stored as given, and never reaches the model.
 */
export async function guardInput(checks: GuardrailChecks, config: AgentConfig, messages: readonly AgentInput[], ctx: CommandContext): Promise<GuardedInput> {
  const guards = guardrailsAt(config.guardrails, 'input');
  if (!guards.length) return { messages: [...messages], decisions: [] };
  const out: AgentInput[] = [];
  const decisions: GuardrailDecision[] = [];
  let blocked: GuardrailDecision | undefined;
  for (const m of messages) {
    if (m.type !== 'text' || blocked) {
      out.push(m);
      continue;
    }
    const outcome = await checks.check(guards, 'input', m.content, { label: 'USER INPUT', ctx });
    decisions.push(...outcome.decisions);
    let content = outcome.text;
    if (outcome.stop) {
      blocked = outcome.stop;
      const guard = guards.find((g) => g.name === outcome.stop!.guardrail)!.guard;
      if (guard.type === 'pattern') content = redact(guard.patterns, content).text;
    }
    out.push({ type: 'text', content });
  }
  return { messages: out, decisions, ...(blocked ? { blocked } : {}) };
}

/** The decisions as events, stored right after the input they checked. */
export function inputGuardrailEvents(decisions: readonly GuardrailDecision[], inputEventId: string, stamp: { newEventId: () => string; now: Date }): SessionEvent[] {
  return decisions.map((d) => ({ type: 'SessionGuardrailTriggered' as const, data: { eventId: stamp.newEventId(), createdAt: stamp.now.toISOString(), ...decisionFields(d), subjectEventId: inputEventId } }));
}

export const decisionFields = (d: GuardrailDecision) => ({ guardrail: d.guardrail, guardrailType: d.type, on: d.on, action: d.action, ...(d.score !== undefined ? { score: d.score } : {}), reason: d.reason });
