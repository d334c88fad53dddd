import { Inject, Injectable } from '@nestjs/common';
import { AGENT_TOOLS, clientOutputProblems, clientToolDefinition, ToolAttachments, ToolConfigurations, ToolRegistry } from '@lib/tools';
import type { ActiveSession } from '../../domain/session';
import type { ActiveAgent } from '../sessions/sessions';

/**
 * What a tool approval's edited arguments are checked against: the parameters of the tool as the model was
 * offered it (its JSON schema, reusable configurations and registered tools resolved as a turn resolves them).
 */
@Injectable()
export class ApprovalArguments {
  constructor(
    private readonly toolConfigs: ToolConfigurations,
    private readonly toolServers: ToolAttachments,
    @Inject(AGENT_TOOLS) private readonly tools: ToolRegistry,
  ) {}

  /** Why the edited arguments do not fit the waiting call's tool (none: they do); undefined for a call not waiting. */
  async problems(agent: ActiveAgent, session: ActiveSession, toolCallId: string, args: Record<string, unknown>): Promise<string[] | undefined> {
    const approval = session.approvals.find((a) => a.toolCallId === toolCallId);
    if (!approval) return undefined;
    const config = await this.toolServers.attach(await this.toolConfigs.resolve(agent.config));
    const tool = config.tool_configurations[approval.toolConfigurationName];
    if (!tool) return [`the agent has no tool ${approval.toolConfigurationName} any more`];
    const runner = this.tools.get(tool.type);
    const parameters = (runner ? runner.definition(approval.toolConfigurationName, tool) : clientToolDefinition(approval.toolConfigurationName, tool)).function.parameters as Record<string, unknown> | undefined;
    return clientOutputProblems(parameters, args);
  }
}

/** The calls a session waits to have approved, as `GET …/pending_approvals` lists them. */
export function pendingApprovalViews(session: ActiveSession): Record<string, unknown>[] {
  return session.approvals
    .filter((a) => !a.decision)
    .map((a) => ({ id: a.eventId, tool_call_id: a.toolCallId, tool_name: a.toolName, tool_configuration_name: a.toolConfigurationName, arguments: a.arguments, approvers: a.approvers, created_at: a.createdAt, expires_at: a.expiresAt }));
}
