import { describe } from 'vitest';
import { opensslMissing } from '../../test/support/test-certificates.js';
import { useTransportContract, type TransportRow } from './transport-contract.js';
import { describeExchangeChecks } from './transport-exchange-contract.js';
import { describeFaultChecks } from './transport-fault-contract.js';
import { describeNetworkChecks } from './transport-network-contract.js';
import { describeTimingChecks } from './transport-timing-contract.js';

/**
 * The contract every Transport keeps, the same cases against both: the in-house HTTP/1.1 pool and
 * undici's Pool speaking HTTP/2 (transport-contract.ts says how they are set up). Where HTTP/2
 * behaves differently by nature or by undici's choice (an abort resets a stream, not its
 * connection), the case says what each transport does.
 */
const TRANSPORTS: TransportRow[] = [
  { name: 'the in-house HTTP/1.1 pool', http2: false, httpVersion: '1.1' },
  { name: "undici's Pool over HTTP/2", http2: true, httpVersion: '2.0' },
];

const missing = opensslMissing();

describe.skipIf(missing !== null).each(TRANSPORTS)(`the Transport contract${missing === null ? '' : ` (skipped: ${missing})`}: $name`, (row) => {
  const contract = useTransportContract(row);
  describeExchangeChecks(contract);
  describeTimingChecks(contract);
  describeFaultChecks(contract);
  describeNetworkChecks(contract);
});
