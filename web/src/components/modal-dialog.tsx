import { useEffect, useRef, type ReactNode } from 'react';

interface ModalDialogProps {
  title: string;
  /** Esc, the close button, or the parent deciding it is done. */
  onClose: () => void;
  children: ReactNode;
  className?: string;
}

/**
 * A native modal `<dialog>` (focus trap, Esc, inert page for free) that exists only while open.
 * Focus goes to its first field and, on close, back to whatever opened it.
 */
export function ModalDialog({ title, onClose, children, className }: ModalDialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const closeRef = useRef(onClose);
  closeRef.current = onClose;

  useEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    const onCancel = (event: Event) => {
      // Let React unmount it rather than the browser closing it under React's feet.
      event.preventDefault();
      closeRef.current();
    };
    dialog.addEventListener('cancel', onCancel);
    dialog.showModal();
    const first = dialog.querySelector<HTMLElement>('input:not([type=hidden]), select, textarea, [data-autofocus]');
    (first ?? dialog.querySelector<HTMLElement>('.dialog-body button'))?.focus();
    return () => {
      dialog.removeEventListener('cancel', onCancel);
      if (dialog.open) dialog.close();
      if (opener?.isConnected === true) opener.focus();
    };
  }, []);

  const titleId = `dialog-title-${title.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <dialog ref={ref} className={`dialog ${className ?? ''}`} aria-labelledby={titleId}>
      <div className="dialog-head">
        <h2 id={titleId}>{title}</h2>
        <button type="button" className="icon-button" aria-label="Close" onClick={() => closeRef.current()}>
          ×
        </button>
      </div>
      <div className="dialog-body">{children}</div>
    </dialog>
  );
}
