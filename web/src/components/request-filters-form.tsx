import { useState, type FormEvent } from 'react';
import type { RequestFilters } from '../api/requests';
import { isoToLocalInput, localInputToIso } from '../lib/format';

const STATUSES = [
  { value: '', label: 'any' },
  { value: '2xx', label: '2xx' },
  { value: '4xx', label: '4xx' },
  { value: '429', label: '429' },
  { value: '5xx', label: '5xx' },
];

interface RequestFiltersFormProps {
  filters: RequestFilters;
  onApply: (filters: RequestFilters) => void;
  onClear: () => void;
}

/**
 * The filters as typed; applied on submit. Mounted with a key of the applied filters, so going
 * back in history shows what the table shows.
 */
export function RequestFiltersForm({ filters, onApply, onClear }: RequestFiltersFormProps) {
  const [sessionId, setSessionId] = useState(filters.session_id ?? '');
  const [tokenId, setTokenId] = useState(filters.token_id ?? '');
  const [team, setTeam] = useState(filters.team ?? '');
  const [model, setModel] = useState(filters.model ?? '');
  const [status, setStatus] = useState(filters.status ?? '');
  // datetime-local works in the browser's zone; the URL and the API keep UTC ISO.
  const [from, setFrom] = useState(isoToLocalInput(filters.from ?? null));
  const [to, setTo] = useState(isoToLocalInput(filters.to ?? null));

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const next: RequestFilters = {};
    const set = (key: keyof RequestFilters, value: string | null) => {
      if (value !== null && value.trim() !== '') next[key] = value.trim();
    };
    set('session_id', sessionId);
    set('token_id', tokenId);
    set('team', team);
    set('model', model);
    set('status', status);
    set('from', localInputToIso(from));
    set('to', localInputToIso(to));
    onApply(next);
  };

  const statuses = STATUSES.some((option) => option.value === status) ? STATUSES : [...STATUSES, { value: status, label: status }];
  return (
    <form className="filters" onSubmit={submit} role="search" aria-label="Filter requests">
      <div className="field">
        <label htmlFor="filter-session">Session id</label>
        <input id="filter-session" type="text" value={sessionId} onChange={(event) => setSessionId(event.target.value)} autoComplete="off" />
      </div>
      <div className="field">
        <label htmlFor="filter-token">Token</label>
        <input id="filter-token" type="text" placeholder="tok_…" value={tokenId} onChange={(event) => setTokenId(event.target.value)} autoComplete="off" />
      </div>
      <div className="field">
        <label htmlFor="filter-team">Team</label>
        <input id="filter-team" type="text" value={team} onChange={(event) => setTeam(event.target.value)} autoComplete="off" />
      </div>
      <div className="field">
        <label htmlFor="filter-model">Model</label>
        <input id="filter-model" type="text" value={model} onChange={(event) => setModel(event.target.value)} autoComplete="off" />
      </div>
      <div className="field">
        <label htmlFor="filter-status">Status</label>
        <select id="filter-status" value={status} onChange={(event) => setStatus(event.target.value)}>
          {statuses.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="filter-from">From</label>
        <input id="filter-from" type="datetime-local" value={from} onChange={(event) => setFrom(event.target.value)} />
      </div>
      <div className="field">
        <label htmlFor="filter-to">To</label>
        <input id="filter-to" type="datetime-local" value={to} onChange={(event) => setTo(event.target.value)} />
      </div>
      <div className="filter-actions">
        <button type="submit" className="primary">
          Apply
        </button>
        <button type="button" onClick={onClear}>
          Clear
        </button>
      </div>
    </form>
  );
}
