import { Link } from '../lib/router';

export function NotFoundPage() {
  return (
    <>
      <h1>Page not found</h1>
      <p>
        Nothing lives at this address. Go to <Link to="/console/requests">Requests</Link>.
      </p>
    </>
  );
}
