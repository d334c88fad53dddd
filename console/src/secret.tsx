import type { ComponentChildren } from 'preact';
import { useRef, useState } from 'preact/hooks';

/**
 * A secret the API returns once (an API key, an app client's secret, a new user's first key): shown in a box with
 * a copy button and a warning, held only in this component's state (never in storage, never logged), and gone
 * when the user dismisses it, leaves the page or reloads. Lists show the API's masked form from then on.
 */
export function SecretOnce({ title, label, value, onDone, children }: { title: string; label: string; value: string; onDone: () => void; children?: ComponentChildren }) {
  const [copied, setCopied] = useState<string>();
  const input = useRef<HTMLInputElement>(null);

  async function copy() {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('Copied to the clipboard.');
    } catch {
      // No clipboard permission: select the text so that Ctrl+C copies it.
      input.current?.select();
      setCopied('Selected: press Ctrl+C (⌘C) to copy.');
    }
  }

  return (
    <div class="card secret" role="region" aria-label={title}>
      <h3>{title}</h3>
      <p class="warning">
        <strong>Copy it now.</strong> This is the only time it is shown: the service keeps only a digest, and this page forgets it when you press Done, leave or reload.
      </p>
      {children}
      <div class="row">
        <div class="field wide-field">
          <label for="secret-once">{label}</label>
          <input id="secret-once" ref={input} class="wide" readOnly value={value} onFocus={(e) => e.currentTarget.select()} autoComplete="off" spellcheck={false} />
        </div>
        <button type="button" onClick={copy}>
          Copy
        </button>
        <button type="button" class="secondary" onClick={onDone}>
          Done
        </button>
      </div>
      <p role="status" class="status">
        {copied ?? ''}
      </p>
    </div>
  );
}
