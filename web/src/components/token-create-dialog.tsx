import { useState, type FormEvent } from 'react';
import { ApiError, errorMessage } from '../api/http';
import { createToken } from '../api/tokens';
import { LIMIT_NAMES, SCOPES, type CreatedToken, type Limits, type NewToken } from '../api/types';
import { limitTexts, parseLimit, LIMITS } from '../lib/limits';
import { splitList } from '../lib/list-text';
import { CopySecret } from './copy-secret';
import { ModalDialog } from './modal-dialog';
import { ErrorAlert } from './states';
import { TextField, type FormError } from './text-field';
import { FormActions, TokenFields, type TokenFieldValues } from './token-fields';
import { useTeamSuggestions } from './use-team-suggestions';

const DEFAULT_SCOPES = SCOPES.filter((scope) => scope !== 'admin' && scope !== 'metrics');

interface TokenCreateDialogProps {
  onCreated: (token: CreatedToken) => void;
  onClose: () => void;
}

export function TokenCreateDialog({ onCreated, onClose }: TokenCreateDialogProps) {
  const [created, setCreated] = useState<CreatedToken | null>(null);
  return (
    <ModalDialog title={created === null ? 'Create token' : 'Token created'} onClose={onClose} className="dialog-wide">
      {created === null ? (
        <CreateForm
          onCreated={(token) => {
            setCreated(token);
            onCreated(token);
          }}
          onCancel={onClose}
        />
      ) : (
        <div className="created">
          <p>
            <strong>{created.name ?? created.id}</strong> ({created.id}) for team {created.team}.
          </p>
          <CopySecret secret={created.secret} />
          <p className="notice">Copy it now: the token will not be shown again. Only its prefix ({created.prefix}) is kept.</p>
          <div className="dialog-actions">
            <button type="button" className="primary" onClick={onClose}>
              Done
            </button>
          </div>
        </div>
      )}
    </ModalDialog>
  );
}

function CreateForm({ onCreated, onCancel }: { onCreated: (token: CreatedToken) => void; onCancel: () => void }) {
  const [name, setName] = useState('');
  const [team, setTeam] = useState('');
  const [project, setProject] = useState('');
  const [fields, setFields] = useState<TokenFieldValues>({ scopes: DEFAULT_SCOPES, models: '', limits: limitTexts({}), expiresIn: '' });
  const { scopes, models, limits, expiresIn } = fields;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<FormError | null>(null);
  const suggestions = useTeamSuggestions(team);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const body: NewToken = { team: team.trim() };
    const parsedLimits: Limits = {};
    for (const limit of LIMIT_NAMES) {
      const value = parseLimit(limits[limit]);
      if (value === undefined) return setError({ message: `${LIMITS[limit].label}: enter a number, or leave it empty for none.`, param: `limits.${limit}` });
      if (value !== null) parsedLimits[limit] = value;
    }
    if (name.trim() !== '') body.name = name.trim();
    if (project.trim() !== '') body.project = project.trim();
    body.scopes = SCOPES.filter((scope) => scopes.includes(scope));
    const modelList = splitList(models);
    if (modelList.length > 0) body.models = modelList;
    if (expiresIn.trim() !== '') body.expires_in = expiresIn.trim();
    if (Object.keys(parsedLimits).length > 0) body.limits = parsedLimits;

    setBusy(true);
    setError(null);
    try {
      onCreated(await createToken(body));
    } catch (failure) {
      setError({ message: errorMessage(failure), param: failure instanceof ApiError ? failure.param : null });
      setBusy(false);
    }
  };

  return (
    <form onSubmit={(event) => void submit(event)} noValidate>
      <ErrorAlert message={error?.message ?? null} />
      <div className="form-grid">
        <TextField
          id="create-name"
          label="Name"
          param="name"
          error={error}
          value={name}
          onChange={setName}
          autoComplete="off"
          hint="To recognise the token by."
        />
        <TextField
          id="create-team"
          label="Team"
          param="team"
          error={error}
          value={team}
          onChange={setTeam}
          list="create-team-list"
          autoComplete="off"
          required
          hint="Created when it does not exist."
        />
        <TextField
          id="create-project"
          label="Project"
          param="project"
          error={error}
          value={project}
          onChange={setProject}
          list="create-project-list"
          autoComplete="off"
          hint="Optional; must be a project of the team."
        />
      </div>
      <datalist id="create-team-list">
        {suggestions.teams.map((item) => (
          <option key={item} value={item} />
        ))}
      </datalist>
      <datalist id="create-project-list">
        {suggestions.projects.map((item) => (
          <option key={item} value={item} />
        ))}
      </datalist>
      {suggestions.error !== null && <p className="hint">{suggestions.error}</p>}
      <TokenFields
        idPrefix="create"
        values={fields}
        onChange={(change) => setFields((current) => ({ ...current, ...change }))}
        error={error}
        expiresHint="90m, 12h, 30d, 2w; empty = never."
      />
      <FormActions submitLabel="Create" busy={busy} onCancel={onCancel} />
    </form>
  );
}
