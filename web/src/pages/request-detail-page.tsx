import { useEffect, useState } from 'react';
import { errorMessage, isAbort } from '../api/http';
import { getRequest } from '../api/requests';
import type { RequestView } from '../api/types';
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

function RequestDetails({ request }: { request: RequestView }) {
  return (
    <div className="detail-sections">
      <section aria-labelledby="timing">
        <h2 id="timing">Timing</h2>
        <DefinitionList
          items={[
            ['Created at', formatTime(request.created_at)],
            ['Upstream first byte', formatMs(request.ttfb_ms)],
            ['Total', formatMs(request.latency_ms)],
            ['Logged at', formatTime(request.logged_at)],
          ]}
        />
      </section>

      <section aria-labelledby="routing">
        <h2 id="routing">Routing</h2>
        <DefinitionList
          items={[
            ['Credential', request.upstream ?? DASH],
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
      </section>

      <section aria-labelledby="error">
        <h2 id="error">Error</h2>
        {request.status < 400 && request.error_code === null ? (
          <p>
            <StatusBadge status={request.status} /> none
          </p>
        ) : (
          <p>
            <StatusBadge status={request.status} /> <span className="mono">{request.error_code ?? 'no code'}</span>
          </p>
        )}
      </section>

      <section aria-labelledby="attempts" className="wide">
        <h2 id="attempts">Attempts</h2>
        {request.attempts.length === 0 ? (
          <p className="muted">No upstream was tried.</p>
        ) : (
          <div className="table-wrap">
            <table className="data-table">
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">Credential</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="num">
                    ms
                  </th>
                </tr>
              </thead>
              <tbody>
                {request.attempts.map((attempt, index) => (
                  <tr key={index} className={attempt.outcome === 'ok' ? '' : 'row-failed'}>
                    <td>{index + 1}</td>
                    <td>{attempt.credential}</td>
                    <td>{attempt.outcome}</td>
                    <td>{attempt.status ?? DASH}</td>
                    <td className="num">{attempt.ms.toLocaleString()}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section aria-labelledby="usage">
        <h2 id="usage">Usage</h2>
        <DefinitionList
          items={[
            ['Prompt tokens', formatCount(request.prompt_tokens)],
            ['Cached tokens', formatCount(request.cached_tokens)],
            ['Completion tokens', formatCount(request.completion_tokens)],
            ['Reasoning tokens', formatCount(request.reasoning_tokens)],
            ['Usage source', request.usage_source ?? DASH],
            ['Cost', formatUsd(request.cost_usd)],
          ]}
        />
      </section>

      <section aria-labelledby="caller">
        <h2 id="caller">Caller</h2>
        <DefinitionList
          items={[
            ['Token', request.token_id === null ? DASH : <Link to={`/console/requests?token_id=${encodeURIComponent(request.token_id)}`}>{request.token_id}</Link>],
            ['Team', request.team ?? DASH],
            ['Project', request.project ?? DASH],
            ['Client request id', request.client_request_id ?? DASH],
            ['Endpoint', request.endpoint],
            ['Model', request.model ?? DASH],
          ]}
        />
      </section>
    </div>
  );
}
