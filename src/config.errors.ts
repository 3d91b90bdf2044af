/** A setting the environment gives a bad value: the message names the variable, and the process does not start. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
