import { configFromRequest } from '../../domain/agent';
import { offload } from './offload';

const agent = (offloading?: object) => configFromRequest({ name: 'a', model: { name: 'm' }, tool_configurations: {}, first_step_name: 's', steps: { s: { instructions: [] } }, ...(offloading ? { tool_output_offloading: offloading } : {}) });

describe('tool output offloading', () => {
  it('passes a small output through and truncates a large one in place, head and tail kept', () => {
    const small = { text: 'short' };
    expect(offload(small, agent(), 128_000)).toBe(small);
    const big = { text: `HEAD${'x'.repeat(300_000)}TAIL` };
    // 25 % of a 4,096-token window at 4 characters per token is 4,096 bytes.
    const cut = offload(big, agent(), 4096) as { truncated: boolean; original_bytes: number; content: string };
    expect(cut.truncated).toBe(true);
    expect(cut.original_bytes).toBe(JSON.stringify(big).length);
    expect(cut.content.length).toBeLessThan(4096);
    expect(cut.content.startsWith('{"text":"HEAD')).toBe(true);
    expect(cut.content.endsWith('TAIL"}')).toBe(true);
    expect(cut.content).toContain('characters omitted');
  });

  it('truncates a medium output when the prompt leaves too little headroom for it', () => {
    const medium = { text: 'm'.repeat(20_000) };
    expect(offload(medium, agent(), 128_000, 1_000)).toBe(medium);
    // 70 % of 128,000 tokens is 89,600; with 88,000 used, 1,600 tokens (6,400 bytes) are left.
    const cut = offload(medium, agent(), 128_000, 88_000) as { truncated: boolean; content: string };
    expect(cut.truncated).toBe(true);
    expect(cut.content.length).toBeLessThan(6400);
  });

  it('keeps what is under min_threshold_bytes and leaves everything when disabled', () => {
    const medium = { text: 'y'.repeat(3000) };
    expect(offload(medium, agent({ min_threshold_bytes: 8192 }), 4096)).toBe(medium);
    const big = { text: 'z'.repeat(100_000) };
    expect(offload(big, agent({ enabled: false }), 4096)).toBe(big);
  });
});
