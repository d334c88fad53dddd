import { quietOnnxRuntime } from './onnx-model';

describe("turning off the ONNX runtime's vendor telemetry", () => {
  it('sets ORT_DISABLE_TELEMETRY=1 where the operator set nothing', () => {
    const env: NodeJS.ProcessEnv = {};
    quietOnnxRuntime(env);
    expect(env.ORT_DISABLE_TELEMETRY).toBe('1');
  });

  it("leaves the operator's own value, including 0 (on), as it is", () => {
    for (const value of ['0', '1', '']) {
      const env: NodeJS.ProcessEnv = { ORT_DISABLE_TELEMETRY: value };
      quietOnnxRuntime(env);
      expect(env.ORT_DISABLE_TELEMETRY).toBe(value);
    }
  });
});
