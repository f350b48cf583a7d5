import { useEffect, useState, type ComponentProps, type ReactNode } from 'react';
import { errorMessage, isAbort } from '../api/http';
import { getRequest } from '../api/requests';
import type { RequestView } from '../api/types';
import { DataTable, type Column } from '../components/data-table';
import { DefinitionList } from '../components/definition-list';
import { ErrorAlert, Loading } from '../components/states';
import { AffinityBadge, StatusBadge } from '../components/status-badge';
import { explainAffinity } from '../lib/affinity';
import { DASH, formatCount, formatMs, formatTime, formatUsd } from '../lib/format';
import { Link, consolePath } from '../lib/router';

export function RequestDetailPage({ requestId }: { requestId: string }) {
  const [request, setRequest] = useState<RequestView | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const abort = new AbortController();
    getRequest(requestId, abort.signal).then(setRequest, (failure: unknown) => {
      if (!isAbort(failure)) setError(errorMessage(failure));
    });
    return () => abort.abort();
  }, [requestId]);

  return (
    <>
      <p className="breadcrumb">
        <Link to="/console/requests">← Requests</Link>
      </p>
      <h1>Request</h1>
      <p className="mono subtitle">{requestId}</p>
      <ErrorAlert message={error} />
      {request === null ? error === null && <Loading /> : <RequestDetails request={request} />}
    </>
  );
}

const ATTEMPT_COLUMNS: readonly Column[] = [{ label: '#' }, { label: 'Credential' }, { label: 'Outcome' }, { label: 'Status' }, { label: 'ms', numeric: true }];

/** A section of the details: a heading that labels it, then its content. */
function DetailSection({ id, title, className, children }: { id: string; title: string; className?: string; children: ReactNode }) {
  return (
    <section aria-labelledby={id} className={className}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** A section of label/value pairs. */
function ListSection({ id, title, items }: { id: string; title: string; items: ComponentProps<typeof DefinitionList>['items'] }) {
  return (
    <DetailSection id={id} title={title}>
      <DefinitionList items={items} />
    </DetailSection>
  );
}

function RequestDetails({ request }: { request: RequestView }) {
  return (
    <div className="detail-sections">
      <ListSection
        id="timing"
        title="Timing"
        items={[
          ['Created at', formatTime(request.created_at)],
          ['Upstream first byte', request.upstream === null ? 'none: no upstream was called' : formatMs(request.ttfb_ms)],
          ['Total', formatMs(request.latency_ms)],
          ['Logged at', formatTime(request.logged_at)],
        ]}
      />

      <ListSection
        id="routing"
        title="Routing"
        items={[
          ['Credential', request.upstream ?? DASH],
          ['Upstream model', request.upstream_model ?? DASH],
          [
            'Session',
            request.session_id === null ? (
              DASH
            ) : (
              <>
                <Link to={consolePath('sessions', request.session_id)}>{request.session_id}</Link>
                {request.session_source !== null && <span className="muted"> ({request.session_source})</span>}
              </>
            ),
          ],
          [
            'Affinity',
            <>
              <AffinityBadge affinity={request.affinity} /> <span className="explain">{explainAffinity(request.affinity)}</span>
            </>,
          ],
        ]}
      />

      <DetailSection id="error" title="Error">
        {request.status < 400 && request.error_code === null ? (
          <p>
            <StatusBadge status={request.status} /> none
          </p>
        ) : (
          <p>
            <StatusBadge status={request.status} /> <span className="mono">{request.error_code ?? 'no code'}</span>
          </p>
        )}
      </DetailSection>

      <DetailSection id="attempts" title="Attempts" className="wide">
        {request.attempts.length === 0 ? (
          <p className="muted">No upstream was tried.</p>
        ) : (
          <DataTable columns={ATTEMPT_COLUMNS}>
            {request.attempts.map((attempt, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a request's attempts never change or reorder; their position is what the table shows
              <tr key={index} className={attempt.outcome === 'ok' ? '' : 'row-failed'}>
                <td>{index + 1}</td>
                <td>{attempt.credential}</td>
                <td>{attempt.outcome}</td>
                <td>{attempt.status ?? DASH}</td>
                <td className="num">{attempt.ms.toLocaleString()}</td>
              </tr>
            ))}
          </DataTable>
        )}
      </DetailSection>

      <ListSection
        id="usage"
        title="Usage"
        items={[
          ['Prompt tokens', formatCount(request.prompt_tokens)],
          ['Cached tokens', formatCount(request.cached_tokens)],
          ['Cache write tokens', formatCount(request.cache_write_tokens)],
          ['Completion tokens', formatCount(request.completion_tokens)],
          ['Reasoning tokens', formatCount(request.reasoning_tokens)],
          ['Usage source', request.usage_source ?? DASH],
          ['Cost', formatUsd(request.cost_usd)],
        ]}
      />

      <ListSection
        id="caller"
        title="Caller"
        items={[
          [
            'Token',
            request.token_id === null ? DASH : <Link to={`/console/requests?token_id=${encodeURIComponent(request.token_id)}`}>{request.token_id}</Link>,
          ],
          ['Team', request.team ?? DASH],
          ['Project', request.project ?? DASH],
          ['Client request id', request.client_request_id ?? DASH],
          ['Client address', request.client_address ?? DASH],
          ['Worker', request.worker === null ? DASH : String(request.worker)],
          ['Endpoint', request.endpoint],
          ['Model', request.model ?? DASH],
        ]}
      />
    </div>
  );
}
