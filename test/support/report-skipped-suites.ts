/**
 * Suites that need a server (or a browser) run only when its address is in the environment. Say which ones are
 * skipped, and why, so a green run without them is never mistaken for a full one.
 */
const SERVER_SUITES: ReadonlyArray<{ variable: string; suites: string; example: string }> = [
  { variable: 'TEST_DATABASE_URL', suites: 'PostgreSQL storage and end-to-end suites', example: 'postgres://postgres@127.0.0.1:5432/test' },
  { variable: 'TEST_REDIS_URL', suites: 'Redis state and shared-routing suites', example: 'redis://127.0.0.1:6379' },
  { variable: 'TEST_REDIS_SERVER', suites: 'isolation suites on a private Redis', example: '/usr/bin/redis-server' },
  { variable: 'TEST_POSTGRES_BIN', suites: 'isolation suites on a private PostgreSQL', example: '/usr/lib/postgresql/15/bin' },
  { variable: 'TEST_CHROMIUM', suites: 'console browser suite', example: '/usr/bin/chromium' },
  { variable: 'TEST_NGINX', suites: 'reverse-proxy suite and the three-replica scale suites behind nginx', example: '/usr/sbin/nginx' },
  { variable: 'TEST_LOGROTATE', suites: 'log file rotated by the real logrotate', example: '/usr/sbin/logrotate' },
  { variable: 'TEST_PROMETHEUS', suites: 'a real Prometheus scraping the gateway', example: '/usr/bin/prometheus' },
  { variable: 'TEST_PROMTOOL', suites: "the /metrics exposition checked by Prometheus's promtool", example: '/usr/bin/promtool' },
];

export default function reportSkippedSuites(): void {
  for (const { variable, suites, example } of SERVER_SUITES) {
    if (!process.env[variable]) process.stdout.write(`skipped: ${suites} (${variable} is not set; e.g. ${variable}=${example})\n`);
  }
}
