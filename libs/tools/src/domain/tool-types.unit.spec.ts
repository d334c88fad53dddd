import { toolProblems, type ToolConfig } from './tool-config';

const problems = (tool: Record<string, unknown>) => toolProblems('tool_configurations.t', 't', tool as unknown as ToolConfig, 'agent');

describe("a tool type's own checks", () => {
  it('run what the type cannot be described without before the fields every tool shares, and its bounds after them', () => {
    expect(problems({ type: 'corpora_search', input_transform: '' })).toEqual({ 'tool_configurations.t.query_configuration': 'a corpora_search tool needs query_configuration.search.corpora with at least one corpus_key' });
    expect(problems({ type: 'web_get', input_transform: '', max_body_bytes: 1 })).toEqual({ 'tool_configurations.t.input_transform': 'must be a jq program of 1 to 10,000 characters' });
    expect(problems({ type: 'web_get', max_body_bytes: 1 })).toEqual({ 'tool_configurations.t.max_body_bytes': 'must be an integer from 1024 to 4194304' });
    expect(problems({ type: 'mcp' })).toEqual({ 'tool_configurations.t.tool_id': 'a mcp tool names its tool by tool_id (GET /v2/tools lists them)' });
  });

  it('leave a type without any to the shared fields, and name the available types in their order for an unknown one', () => {
    expect(problems({ type: 'artifact_grep' })).toEqual({});
    expect(problems({ type: 'nope' })['tool_configurations.t.type']).toMatch(/^tool type nope is not available in this service yet; available: corpora_search, client, web_get, .*, corpora_search_20260608, session_recall, reference$/);
  });

  it('bound session_recall\'s limit, text and lexical_interpolation', () => {
    expect(problems({ type: 'session_recall' })).toEqual({});
    expect(problems({ type: 'session_recall', limit: 50, max_text_chars: 100 })).toEqual({});
    expect(problems({ type: 'session_recall', limit: 51 })).toEqual({ 'tool_configurations.t.limit': 'must be an integer from 1 to 50 (default 5)' });
    expect(problems({ type: 'session_recall', limit: 2.5 })).toHaveProperty(['tool_configurations.t.limit']);
    expect(problems({ type: 'session_recall', max_text_chars: 99 })).toHaveProperty(['tool_configurations.t.max_text_chars']);
    expect(problems({ type: 'session_recall', lexical_interpolation: 0 })).toEqual({});
    expect(problems({ type: 'session_recall', lexical_interpolation: 1 })).toEqual({});
    expect(problems({ type: 'session_recall', lexical_interpolation: 0.3 })).toEqual({});
    expect(problems({ type: 'session_recall', lexical_interpolation: 1.5 })['tool_configurations.t.lexical_interpolation']).toMatch(/^must be a number from 0 .* to 1 /);
    expect(problems({ type: 'session_recall', lexical_interpolation: '0.3' })).toHaveProperty(['tool_configurations.t.lexical_interpolation']);
    expect(problems({ type: 'session_recall', lexical_interpolation: -0.1 })).toHaveProperty(['tool_configurations.t.lexical_interpolation']);
  });
});
