import { authContentProblems, maskedAuth, splitAuth } from './auth';
import { defaultUri, geminiEndpoint, validateCombination } from './llm';

describe('auth variants of the provider types', () => {
  it('keeps identifiers (access key id, region, project) and masks every secret', () => {
    const iam = { type: 'bedrock_static_iam' as const, aws_access_key_id: 'AKIA1', aws_secret_access_key: 's3cret', region: 'us-east-1' };
    const { identifiers, secrets } = splitAuth(iam);
    expect(secrets).toEqual({ aws_secret_access_key: 's3cret' });
    expect(maskedAuth({ type: iam.type, identifiers })).toEqual({ type: 'bedrock_static_iam', aws_access_key_id: 'AKIA1', aws_secret_access_key: '****', region: 'us-east-1' });
    expect(maskedAuth({ type: 'vertex_service_account', identifiers: splitAuth({ type: 'vertex_service_account', key_json: '{}', project: 'p', region: 'r' }).identifiers })).toEqual({
      type: 'vertex_service_account',
      key_json: '****',
      project: 'p',
      region: 'r',
    });
    expect(maskedAuth({ type: 'api_key', identifiers: {} })).toEqual({ type: 'api_key', api_key: '****' });
  });

  it('refuses a service-account key that is not one, and a malformed region', () => {
    expect(authContentProblems({ type: 'service_account', key_json: '{"client_email":"a@b"}' })).toHaveProperty(['auth.key_json']);
    expect(authContentProblems({ type: 'bedrock_api_key', api_key: 'k', region: 'us east 1' })).toHaveProperty(['auth.region']);
    expect(authContentProblems({ type: 'bedrock_api_key', api_key: 'k', region: 'eu-west-1' })).toEqual({});
  });
});

describe('provider type, auth and uri combinations', () => {
  const sealed = (type: string) => ({ type }) as never;

  it('pairs each type with the auth variants the reference gives it', () => {
    expect(() => validateCombination({ type: 'vertex-ai', uri: 'https://generativelanguage.googleapis.com/v1beta', auth: sealed('bearer') })).toThrow(/auth.type/);
    expect(() => validateCombination({ type: 'openai-responses', uri: 'https://api.openai.com/v1/responses', auth: sealed('api_key') })).toThrow(/auth.type/);
    expect(() => validateCombination({ type: 'anthropic', uri: '', auth: null })).toThrow(/auth/);
    expect(() => validateCombination({ type: 'anthropic', uri: '', auth: sealed('bedrock_api_key') })).not.toThrow();
    expect(() => validateCombination({ type: 'anthropic', uri: '', auth: sealed('header') })).toThrow(/uri/);
    expect(() => validateCombination({ type: 'openai-compatible', uri: 'http://localhost:8000/v1/chat/completions', auth: null })).not.toThrow();
  });

  it("defaults an Anthropic uri to Anthropic's Messages URL for direct auth, and leaves Bedrock and Vertex to their region", () => {
    expect(defaultUri('anthropic', 'header')).toBe('https://api.anthropic.com/v1/messages');
    expect(defaultUri('anthropic', 'vertex_access_token')).toBe('');
    expect(defaultUri('openai-compatible', 'bearer')).toBeUndefined();
  });

  it('normalises Gemini uris: model path, method and query dropped; Vertex project and location read', () => {
    expect(geminiEndpoint('https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent?alt=sse')).toEqual({
      baseUrl: 'https://generativelanguage.googleapis.com',
      apiVersion: 'v1beta',
      vertex: false,
      project: undefined,
      location: undefined,
    });
    expect(geminiEndpoint('https://us-central1-aiplatform.googleapis.com/v1/projects/my-proj/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent')).toEqual({
      baseUrl: 'https://us-central1-aiplatform.googleapis.com',
      apiVersion: 'v1',
      vertex: true,
      project: 'my-proj',
      location: 'us-central1',
    });
    expect(geminiEndpoint('http://127.0.0.1:9/proxy/v1/projects/p/locations/l').baseUrl).toBe('http://127.0.0.1:9/proxy');
    expect(() => validateCombination({ type: 'vertex-ai', uri: 'https://generativelanguage.googleapis.com/v1beta', auth: sealed('service_account') })).toThrow(/uri/);
    expect(() => validateCombination({ type: 'vertex-ai', uri: 'https://x-aiplatform.googleapis.com/v1/projects/p/locations/l', auth: sealed('api_key') })).toThrow(/uri/);
  });
});
