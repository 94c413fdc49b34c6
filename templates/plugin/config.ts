// The options of __NAME__ (the section `plugins.__NAME__` of a config file).
// Defaults live in the schema; check() holds what a schema cannot say.

export interface Config {
  memberId?: string;
  interval: number;
  ttl: number;
}

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    memberId: { type: 'string', pattern: '^[^:\\s]+$', description: 'Names this member (default: host-pid).' },
    interval: { type: 'number', exclusiveMinimum: 0, default: 5, description: 'Seconds between heartbeats.' },
    ttl: { type: 'integer', minimum: 1, default: 15, description: 'Seconds a member record outlives its last heartbeat.' },
  },
} as const;

/** Environment variables read as options: NAME → option. */
export const configEnv = {
  __ENV___MEMBER_ID: 'memberId',
} as const;

export function checkConfig(config: Config): string[] {
  return config.ttl > config.interval ? [] : [`ttl (${config.ttl}s) must be greater than interval (${config.interval}s), or live members expire`];
}
