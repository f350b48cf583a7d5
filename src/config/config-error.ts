/** A configuration problem, reported as one line: the key, then what is wrong with it. */
export class ConfigError extends Error {
  readonly key: string;
  readonly problem: string;

  constructor(key: string, problem: string) {
    super(key === '' ? problem : `${key}: ${problem}`);
    this.name = 'ConfigError';
    this.key = key;
    this.problem = problem;
  }
}
