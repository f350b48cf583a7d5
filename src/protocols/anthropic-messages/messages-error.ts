/** The `error` object of Anthropic's error envelope (`{"type":"error","error":{…}}`). */
export interface MessagesErrorObject {
  type: string;
  message: string;
}

/** Anthropic's error envelope; `request_id` as its own answers carry it. */
export interface MessagesErrorBody {
  type: 'error';
  error: MessagesErrorObject;
  request_id?: string;
}

/**
 * An HTTP status as Anthropic answers it, so that its clients retry as they do against Anthropic:
 * the statuses Anthropic uses are kept, 422 (a field failed validation) is its 400, no upstream
 * available (503) and an upstream that said it was overloaded are its 529 "overloaded", any other
 * upstream failure (502) its 500.
 */
export function messagesStatus(status: number, overloaded = false): number {
  if (status === 422) return 400;
  if (status === 503 || (overloaded && status >= 500)) return 529;
  if (status === 502) return 500;
  return status;
}

/** The error `type` Anthropic gives a status (docs.anthropic.com, "Errors"); the status is Anthropic's (`messagesStatus`). */
export function messagesErrorType(status: number): string {
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 408:
    case 504:
      return 'timeout_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 529:
      return 'overloaded_error';
    default:
      return status >= 400 && status < 500 ? 'invalid_request_error' : 'api_error';
  }
}

/** The body of an error whose status is Anthropic's (`messagesStatus`). */
export function messagesErrorBody(status: number, message: string, requestId?: string): MessagesErrorBody {
  return { type: 'error', error: { type: messagesErrorType(status), message }, ...(requestId === undefined ? {} : { request_id: requestId }) };
}
