import { useState } from 'react';
import { errorMessage } from '../api/http';
import { revokeToken } from '../api/tokens';
import type { Token } from '../api/types';
import { ModalDialog } from './modal-dialog';
import { ErrorAlert } from './states';

interface TokenRevokeDialogProps {
  token: Token;
  onRevoked: (token: Token) => void;
  onClose: () => void;
}

export function TokenRevokeDialog({ token, onRevoked, onClose }: TokenRevokeDialogProps) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const revoke = async () => {
    setBusy(true);
    setError(null);
    try {
      onRevoked(await revokeToken(token.id));
      onClose();
    } catch (failure) {
      setError(errorMessage(failure));
      setBusy(false);
    }
  };

  const label = token.name ?? token.id;
  return (
    <ModalDialog title="Revoke token" onClose={onClose}>
      <p>
        Revoke <strong>{label}</strong> ({token.id}, team {token.team})? Requests with it are refused from the next one on. This cannot be undone.
      </p>
      <ErrorAlert message={error} />
      <div className="dialog-actions">
        <button type="button" onClick={onClose} data-autofocus>
          Cancel
        </button>
        <button type="button" className="danger" onClick={() => void revoke()} disabled={busy} aria-busy={busy}>
          Revoke token
        </button>
      </div>
    </ModalDialog>
  );
}
