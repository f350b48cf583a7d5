import { useRef, useState } from 'react';

/** The new token's secret, once, with a Copy button that works without the async clipboard too. */
export function CopySecret({ secret }: { secret: string }) {
  const codeRef = useRef<HTMLElement>(null);
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);

  const copy = async () => {
    try {
      if (navigator.clipboard === undefined) throw new Error('no async clipboard');
      await navigator.clipboard.writeText(secret);
      setCopied('yes');
    } catch {
      // Plain http (no secure context) or a denied permission: select it and use the old command.
      const code = codeRef.current;
      const selection = window.getSelection();
      if (code === null || selection === null) return setCopied('failed');
      const range = document.createRange();
      range.selectNodeContents(code);
      selection.removeAllRanges();
      selection.addRange(range);
      setCopied(document.execCommand('copy') ? 'yes' : 'failed');
    }
  };

  return (
    <div className="secret">
      <code ref={codeRef} data-testid="token-secret" className="secret-value">
        {secret}
      </code>
      <button type="button" onClick={() => void copy()} autoFocus>
        Copy
      </button>
      <span className="copied" role="status">
        {copied === 'yes' ? 'Copied' : copied === 'failed' ? 'Copy failed: select the text and copy it yourself.' : ''}
      </span>
    </div>
  );
}
