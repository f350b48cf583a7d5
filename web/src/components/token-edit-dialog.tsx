import { useState, type FormEvent } from 'react';
import { ApiError, errorMessage } from '../api/http';
import { updateToken } from '../api/tokens';
import { LIMIT_NAMES, type LimitChanges, type Token, type TokenChanges } from '../api/types';
import { formatTime } from '../lib/format';
import { LIMITS, limitTexts, parseLimit } from '../lib/limits';
import { splitList } from '../lib/list-text';
import { ModalDialog } from './modal-dialog';
import { ErrorAlert } from './states';
import { TextField, type FormError } from './text-field';
import { FormActions, TokenFields, type TokenFieldValues } from './token-fields';

interface TokenEditDialogProps {
  token: Token;
  onSaved: (token: Token) => void;
  onClose: () => void;
}

const sameSet = (left: readonly string[], right: readonly string[]) => left.length === right.length && left.every((item) => right.includes(item));

/** Changes a token with a PATCH of only what changed; limits as a merge patch (cleared: null). */
export function TokenEditDialog({ token, onSaved, onClose }: TokenEditDialogProps) {
  const initialLimits = limitTexts(token.limits);
  const [name, setName] = useState(token.name ?? '');
  const [fields, setFields] = useState<TokenFieldValues>({
    scopes: token.scopes,
    models: (token.models ?? []).join(', '),
    limits: initialLimits,
    expiresIn: '',
  });
  const { scopes, models, limits, expiresIn } = fields;
  const [neverExpires, setNeverExpires] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<FormError | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const changes: TokenChanges = {};
    if (name.trim() !== (token.name ?? '')) changes.name = name.trim() === '' ? null : name.trim();
    if (!sameSet(scopes, token.scopes)) changes.scopes = scopes;
    const modelList = splitList(models);
    const wantModels = modelList.length === 0 ? null : modelList;
    const hadModels = token.models;
    if ((wantModels === null) !== (hadModels === null) || (wantModels !== null && hadModels !== null && !sameSet(wantModels, hadModels)))
      changes.models = wantModels;
    const limitChanges: LimitChanges = {};
    for (const limit of LIMIT_NAMES) {
      if (limits[limit].trim() === initialLimits[limit]) continue;
      const value = parseLimit(limits[limit]);
      if (value === undefined) return setError({ message: `${LIMITS[limit].label}: enter a number, or leave it empty for none.`, param: `limits.${limit}` });
      if (value !== (token.limits[limit] ?? null)) limitChanges[limit] = value;
    }
    if (Object.keys(limitChanges).length > 0) changes.limits = limitChanges;
    if (neverExpires) changes.expires_at = null;
    else if (expiresIn.trim() !== '') changes.expires_in = expiresIn.trim();

    if (Object.keys(changes).length === 0) return onClose();
    setBusy(true);
    setError(null);
    try {
      onSaved(await updateToken(token.id, changes));
      onClose();
    } catch (failure) {
      setError({ message: errorMessage(failure), param: failure instanceof ApiError ? failure.param : null });
      setBusy(false);
    }
  };

  return (
    <ModalDialog title={`Edit ${token.name ?? token.id}`} onClose={onClose} className="dialog-wide">
      <form onSubmit={(event) => void submit(event)} noValidate>
        <p className="hint">
          {token.id} · team {token.team}
          {token.project === null ? '' : ` · project ${token.project}`}
        </p>
        <ErrorAlert message={error?.message ?? null} />
        <div className="form-grid">
          <TextField id="edit-name" label="Name" param="name" error={error} value={name} onChange={setName} autoComplete="off" />
        </div>
        <TokenFields
          idPrefix="edit"
          values={fields}
          onChange={(change) => setFields((current) => ({ ...current, ...change }))}
          error={error}
          expiresDisabled={neverExpires}
          expiresHint={`From now: 90m, 12h, 30d, 2w; empty = unchanged (now ${token.expires_at === null ? 'never' : formatTime(token.expires_at)}).`}
        >
          {token.expires_at !== null && (
            <label className="check check-standalone">
              <input type="checkbox" checked={neverExpires} onChange={(event) => setNeverExpires(event.target.checked)} />
              <span>Never expires</span>
            </label>
          )}
        </TokenFields>
        <FormActions submitLabel="Save" busy={busy} onCancel={onClose} />
      </form>
    </ModalDialog>
  );
}
