import { currentTraceparent, inSpan, SpanHandle } from '@lib/platform';
import type { ModelAnswer } from './model-call';
import type { TurnSetup } from './turn-setup';

/**
 * The live OpenTelemetry spans of a turn (docs/telemetry.md), named and shaped as the stored traces are
 * (docs/traces.md) with the GenAI semantic conventions' attributes: `invoke_agent` around the turn, `chat` around
 * each model call, `execute_tool` around each tool call; a sub-agent's turn nests under the `execute_tool` that ran
 * it. No arguments, outputs or message text: spans leave the service, the session's events keep the content.
 */
export function invokeAgentSpan<T>(setup: TurnSetup, turnId: string, run: (span: SpanHandle) => Promise<T>): Promise<T> {
  const name = setup.agent.config.name ?? setup.agent.key;
  return inSpan(
    `invoke_agent ${name}`,
    {
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.id': setup.agent.key,
        'gen_ai.agent.name': name,
        'gen_ai.conversation.id': setup.state.key,
        'gen_ai.request.model': setup.agent.config.model.name,
        'agent.turn_id': turnId,
      },
    },
    run,
  );
}

/** One model call; its tokens go on the span when the answer came. */
export function chatSpan(model: string, call: () => Promise<ModelAnswer>): Promise<ModelAnswer> {
  return inSpan(`chat ${model}`, { kind: 'client', attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': model } }, async (span) => {
    const answer = await call();
    span.set({ 'gen_ai.usage.input_tokens': answer.usage.input_tokens, 'gen_ai.usage.output_tokens': answer.usage.output_tokens, 'agent.tool_calls': answer.toolCalls.length });
    const traceparent = answer.toolCalls.length ? currentTraceparent() : undefined;
    return traceparent ? { ...answer, traceparent } : answer;
  });
}

/**
 * One tool call, a child of the `chat` span that asked for it (`parent`, as in docs/traces.md; it ended when the
 * answer came), else of the turn's; a tool that answered with an error marks the span failed.
 */
export function executeToolSpan<T extends { readonly error?: boolean }>(name: string, toolType: string, callId: string, parent: string | undefined, call: () => Promise<T>): Promise<T> {
  return inSpan(`execute_tool ${name}`, { parent, attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name, 'gen_ai.tool.type': toolType, 'gen_ai.tool.call.id': callId } }, async (span) => {
    const result = await call();
    if (result.error) span.fail('the tool answered with an error');
    return result;
  });
}
