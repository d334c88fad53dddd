import { GUARDRAIL_REFUSAL, guardrailsAt, sentenceRelease, takeSentences } from '../../domain/guardrails';
import type { AgentConfig } from '../../domain/agent-config';
import { retrievedTextsOf } from '../../domain/turn-record';
import type { ModelAnswer } from '../turn/model-call';
import type { TurnSetup } from '../turn/turn-setup';
import type { TurnState } from '../turn/turn-state';
import type { GuardrailChecks, GuardrailDecision, GuardrailOutcome } from './guardrail-checks';
import { decisionFields } from './input-guard';

/** Asks the model once more, told why its answer was withheld (a `regenerate` guardrail). */
export type Regenerate = (reason: string, withheld: string) => Promise<ModelAnswer>;

/**
 * The output guardrails of one turn, between the model and the user. Not streamed: the answer is checked before it
 * is stored. Streamed: the pieces are held and the checked answer is released at once (first byte = whole answer +
 * checks), or, when every output guardrail says `check: "sentence"`, released sentence by sentence, each checked
 * before it goes out. A sentence blocked after earlier ones went out stops the answer there: the rest is withheld,
 * the refusal follows what was sent, and the stored answer is exactly what the user got (sent sentences + refusal).
 */
export class OutputGuard {
  private readonly guards;
  private readonly sentences: boolean;
  private held = '';
  private released = '';
  private chain: Promise<void> = Promise.resolve();
  private stopped = false;
  /** Which model answer the queued sentence checks belong to: a tool-call answer's are dropped with it. */
  private answerNo = 0;

  constructor(
    private readonly checks: GuardrailChecks,
    config: AgentConfig,
    private readonly setup: TurnSetup,
    private readonly turn: TurnState,
    private readonly turnId: string,
  ) {
    this.guards = guardrailsAt(config.guardrails, 'output');
    this.sentences = setup.streaming && sentenceRelease(config.guardrails);
  }

  /** A guard when the agent has output guardrails, else undefined (the turn streams as before). */
  static of(checks: GuardrailChecks, config: AgentConfig, setup: TurnSetup, turn: TurnState, turnId: string): OutputGuard | undefined {
    return guardrailsAt(config.guardrails, 'output').length ? new OutputGuard(checks, config, setup, turn, turnId) : undefined;
  }

  /** A piece of the model's answer as it streams: held, or queued for its sentence's check. */
  delta(text: string): void {
    this.held += text;
    if (!this.sentences || this.stopped) return;
    const { sentences, rest } = takeSentences(this.held);
    this.held = rest;
    const no = this.answerNo;
    for (const s of sentences) this.chain = this.chain.then(() => this.release(s, no));
  }

  /** The model answered with tool calls: nothing more of it is released, and the next answer starts afresh. */
  discard(): void {
    this.held = '';
    this.released = '';
    this.stopped = false;
    this.answerNo++;
  }

  /** The answer as the user gets it (checked, masked, regenerated once, or the refusal), released to a streaming caller. */
  async settle(answer: ModelAnswer, regenerate: Regenerate): Promise<ModelAnswer> {
    if (this.sentences) return this.settleSentences(answer);
    let current = answer;
    let usage = answer.usage;
    let outcome = await this.run(current.content, 'answer');
    if (outcome.stop?.action === 'regenerate') {
      current = await regenerate(outcome.stop.reason, current.content);
      usage = { input_tokens: usage.input_tokens + current.usage.input_tokens, output_tokens: usage.output_tokens + current.usage.output_tokens };
      // Once: a second answer the guardrails stop is blocked.
      outcome = await this.run(current.content, 'answer', true);
    }
    const content = outcome.stop ? GUARDRAIL_REFUSAL : outcome.text;
    if (this.setup.streaming && content) this.setup.sink.delta(content);
    this.held = '';
    return { ...current, content, usage };
  }

  private async settleSentences(answer: ModelAnswer): Promise<ModelAnswer> {
    const rest = this.held;
    this.held = '';
    const no = this.answerNo;
    if (rest) this.chain = this.chain.then(() => this.release(rest, no));
    await this.chain;
    let content = this.released;
    if (this.stopped) {
      const tail = `${content && !/\s$/.test(content) ? ' ' : ''}${GUARDRAIL_REFUSAL}`;
      this.setup.sink.delta(tail);
      content += tail;
    }
    this.released = '';
    this.stopped = false;
    return { ...answer, content };
  }

  private async release(sentence: string, no: number): Promise<void> {
    if (this.stopped || no !== this.answerNo) return;
    const outcome = await this.run(sentence, 'sentence');
    if (no !== this.answerNo) return;
    if (outcome.stop) {
      this.stopped = true;
      return;
    }
    this.released += outcome.text;
    this.setup.sink.delta(outcome.text);
  }

  /** Checks a text; what fired is stored with the answer, before it (`guardrail_triggered`). */
  private async run(text: string, check: 'answer' | 'sentence', last = false): Promise<GuardrailOutcome> {
    const outcome = await this.checks.check(this.guards, 'output', text, { label: 'ASSISTANT ANSWER', sources: this.sources(), ctx: this.setup.ctx });
    const decided = (d: GuardrailDecision): GuardrailDecision => (last && d.action === 'regenerate' ? { ...d, action: 'block', reason: `${d.reason} (after one regeneration)` } : d);
    // Stored with the answer (one commit), and streamed just before it.
    if (outcome.decisions.length) {
      this.turn.withNext(outcome.decisions.map((d) => ({ type: 'SessionGuardrailTriggered' as const, data: { ...this.turn.base(this.turnId), ...decisionFields(decided(d)), ...(this.setup.streaming ? { check } : {}) } })));
    }
    return outcome.stop ? { ...outcome, stop: decided(outcome.stop) } : outcome;
  }

  /** The turn's retrieved texts (its successful retrieval tools' results): what grounding scores against. */
  private sources(): string[] {
    return this.turn.state.events.flatMap((e) => (e.type === 'SessionToolReturned' && e.data.turnId === this.turnId && !e.data.error ? retrievedTextsOf(e.data.toolOutput) : []));
  }
}
